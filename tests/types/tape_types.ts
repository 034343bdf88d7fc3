/**
 * Compile-time checks of the tape options: every `@ts-expect-error` line below is a typo that must
 * NOT compile. CI runs `deno check` on this file. Nothing here runs: the checks live inside a
 * function that is never called.
 *
 * @module
 */

import type { Endpoint } from "../../service/mod.ts";
import { tapeEndpoint } from "../../tape/mod.ts";
import { tapeMiddleware } from "../../ai-sdk/mod.ts";

/** Never called: the body only has to type-check. */
export function typeChecks(endpoint: Endpoint): void {
  tapeEndpoint({ path: "t.jsonl", mode: "record", endpoint, content: "drop", timing: "recorded" });
  tapeMiddleware({ path: "t.jsonl", mode: "replay", timing: "immediate" });
  // @ts-expect-error a misspelt mode does not compile
  tapeEndpoint({ path: "t.jsonl", mode: "replya" });
  // @ts-expect-error content is "keep" or "drop"
  tapeEndpoint({ path: "t.jsonl", mode: "replay", content: "omit" });
  // @ts-expect-error timing is "immediate" or "recorded"
  tapeMiddleware({ path: "t.jsonl", mode: "replay", timing: "real" });
  // @ts-expect-error an unknown option key does not compile
  tapeMiddleware({ path: "t.jsonl", mode: "replay", contents: "drop" });
  // @ts-expect-error path is required
  tapeEndpoint({ mode: "replay" });
}
