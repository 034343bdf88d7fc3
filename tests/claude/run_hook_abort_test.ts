// A Claude hook started on an aborted signal does not run: the command is not spawned and the
// http hook is not sent; both end as aborted. A signal aborted while the hook runs ends it too.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runHook } from "../../claude/_run_hook.ts";
import { ClaudeHookError } from "../../claude/hook_error.ts";

describe("Claude hooks and the caller's abort", () => {
  let server: Server;
  let url = "";
  let requests = 0;
  let dir = "";

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hookscope-run-hook-"));
    server = createServer((request, response) => {
      requests++;
      request.resume();
      // Never answers: only an abort or the deadline ends the call.
      request.on("end", () => {});
      response.on("error", () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });

  after(async () => {
    server.closeAllConnections?.();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const aborted = (error: unknown): boolean =>
    error instanceof ClaudeHookError && error.why === "timeout" && /aborted/.test(error.message);

  it("an http hook on an aborted signal is not sent", async () => {
    const controller = new AbortController();
    controller.abort();
    const before = requests;
    await assert.rejects(
      runHook({ type: "http", url }, "{}", {
        cwd: dir,
        env: {},
        timeoutMs: 60_000,
        signal: controller.signal,
      }),
      aborted,
    );
    assert.equal(requests, before);
  });

  it("a command hook on an aborted signal is not spawned", async () => {
    const controller = new AbortController();
    controller.abort();
    const marker = join(dir, "ran");
    await assert.rejects(
      runHook({ type: "command", command: `touch '${marker}'` }, "{}", {
        cwd: dir,
        env: {},
        timeoutMs: 60_000,
        signal: controller.signal,
      }),
      aborted,
    );
    assert.equal(existsSync(marker), false);
  });

  it("an http hook that never answers ends when the signal aborts, and at its deadline", async () => {
    const controller = new AbortController();
    const running = runHook({ type: "http", url }, "{}", {
      cwd: dir,
      env: {},
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(running, aborted);
    await assert.rejects(
      runHook({ type: "http", url }, "{}", { cwd: dir, env: {}, timeoutMs: 50 }),
      (error) =>
        error instanceof ClaudeHookError && error.why === "timeout" &&
        /timed out after 50 ms/.test(error.message),
    );
  });
});
