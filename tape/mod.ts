/**
 * Model-call tapes (`@hookscope/core/tape`): `tapeEndpoint` records each call of an `Endpoint`
 * (its redacted request fingerprint and its answer, streamed chunks with their timing) to a JSONL
 * file and replays them in order without a server, failing with a `TapeMismatchError` and a diff
 * when a request differs. A testing tool, so it has its own entry and the web-standard entries do
 * not carry it. The AI SDK twin is `tapeMiddleware` in `@hookscope/core/ai-sdk`.
 *
 * @example Record, replay, and a replay past the tape's end
 * ```ts
 * import { FunctionEndpoint } from "@hookscope/core/service";
 * import { tapeEndpoint, TapeExhaustedError } from "@hookscope/core/tape";
 * import assert from "node:assert/strict";
 *
 * let text = "";
 * const files = {
 *   readText: () => Promise.resolve(text),
 *   writeText: (_path: string, t: string) => { text = t; return Promise.resolve(); },
 * };
 * const live = new FunctionEndpoint({ call: () => ({ answer: 42 }) });
 * const recorder = tapeEndpoint({ path: "t.jsonl", mode: "record", endpoint: live, files });
 * const { signal } = new AbortController();
 * await recorder.call({ messages: ["q"] }, { signal });
 * const player = tapeEndpoint({ path: "t.jsonl", mode: "replay", files });
 * const replayed = await player.call({ messages: ["q"] }, { signal });
 * assert.deepEqual(replayed.raw, { answer: 42 }); // the recorded body, as the typed answer's raw
 * await assert.rejects(player.call({ messages: ["q"] }, { signal }), TapeExhaustedError);
 * ```
 *
 * @module
 */

export * from "./tape_endpoint.ts";
export * from "./tape_errors.ts";
