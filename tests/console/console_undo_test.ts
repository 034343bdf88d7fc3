// The console's undo on a real 127.0.0.1 server, over checkpoints the coding toolkit's commit kept:
// it lists a session's undoable calls, undoes one with the token (recorded as ChangesUndone by the
// token's holder), refuses while a later call changed the same paths unless forced, and is
// guarded like an answer (no token, cross-site, not JSON, too large, read-only).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { consoleHandler } from "../../console/handler.ts";
import { listen, type Listening } from "../../cli/_http_listen.ts";
import { MemoryStore } from "../../store/memory_store.ts";
import { undoFixture } from "./_undo_fixture.ts";

const TOKEN = "undo-token";
const dir = mkdtempSync(join(tmpdir(), "hookscope-console-undo-"));
const fixture = undoFixture(dir);
const store = new MemoryStore();
let server: Listening;
let base: string;

before(async () => {
  await fixture.write(store, "s1", "call-1", "first edit\n");
  await fixture.write(store, "s1", "call-2", "second edit\n");
  await fixture.write(store, "other", "call-9", "elsewhere\n");
  server = await listen(
    consoleHandler(store, {
      tokens: { ana: TOKEN },
      effectsDirs: [fixture.effectsDir],
      maxBodyBytes: 1024,
    }),
    { host: "127.0.0.1", port: 0 },
  );
  base = `http://127.0.0.1:${server.port}`;
});
after(async () => {
  await server.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function undo(body: unknown, headers: Record<string, string> = {}, url = base) {
  const response = await fetch(`${url}/api/undo`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.json() };
}

describe("undo from the console", () => {
  it("lists the checkpoints of a session's calls only", async () => {
    const response = await fetch(`${base}/api/checkpoints?session=s1`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: AbortSignal.timeout(10_000),
    });
    const body = await response.json();
    assert.equal(body.undo, true);
    assert.deepEqual(
      body.checkpoints.map((c: { callId: string; state: string }) => [c.callId, c.state]),
      [["call-1", "committed"], ["call-2", "committed"]],
    );
    assert.equal(body.checkpoints[0].workspace, fixture.workspace);
    assert.deepEqual(body.checkpoints[0].changes, [{ path: "notes.md", kind: "modified" }]);
  });

  it("is guarded like an answer: token, same site, JSON, size", async () => {
    const call = { session: "s1", callId: "call-2" };
    assert.equal((await undo(call, { authorization: "" })).status, 401);
    assert.equal((await undo(call, { authorization: "Bearer wrong" })).status, 401);
    assert.equal((await undo(call, { "sec-fetch-site": "cross-site" })).status, 403);
    assert.equal((await undo(call, { origin: "https://evil.example" })).status, 403);
    const form = await undo("session=s1&callId=call-2", {
      "content-type": "application/x-www-form-urlencoded",
    });
    assert.equal(form.status, 415);
    assert.equal((await undo({ ...call, pad: "x".repeat(2000) })).status, 413);
    assert.equal((await undo({ session: "s1" })).status, 400);
    const listed = await fetch(`${base}/api/checkpoints?session=s1`, {
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(listed.status, 401);
    await listed.body?.cancel();
    const readOnly = await listen(consoleHandler(store, { effectsDirs: [fixture.effectsDir] }), {
      host: "127.0.0.1",
      port: 0,
    });
    try {
      const refused = await undo(call, {}, `http://127.0.0.1:${readOnly.port}`);
      assert.equal(refused.status, 403);
    } finally {
      await readOnly.close();
    }
    assert.equal(fixture.notes(), "elsewhere\n");
  });

  it("refuses a call of another session, and one a later call changed unless forced", async () => {
    const foreign = await undo({ session: "s1", callId: "call-9" });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.why, "unknown_call");
    // call-1's file was changed again by call-2 and call-9.
    const conflict = await undo({ session: "s1", callId: "call-1" });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.why, "conflict");
    assert.match(
      conflict.body.error,
      /Later calls \(call-9, call-2; newest first\) changed the same paths \(notes\.md\)/,
    );
    // What a page needs to say it to a person: the later calls, newest first (the one to undo
    // first), the session each belongs to, and the paths.
    assert.deepEqual(conflict.body.later, [
      { callId: "call-9", toolName: "bash", sessionId: "other" },
      { callId: "call-2", toolName: "bash", sessionId: "s1" },
    ]);
    assert.deepEqual(conflict.body.paths, ["notes.md"]);
    assert.equal(fixture.notes(), "elsewhere\n");
  });

  it("undoes the latest call with the token, records who did, and refuses a second undo", async () => {
    const done = await undo({ session: "other", callId: "call-9" });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.workspace, fixture.workspace);
    assert.equal(fixture.notes(), "second edit\n");
    const signals = await store.listSessionSignals("other");
    const undone = signals.find((s) => s.kind === "ChangesUndone");
    assert.equal((undone?.payload as { by?: string }).by, "ana");
    assert.equal((undone?.payload as { callId?: string }).callId, "call-9");
    const again = await undo({ session: "other", callId: "call-9" });
    assert.equal(again.status, 409);
    assert.match(again.body.error, /undone already/);
  });

  it("a forced undo restores the file as it was before the call", async () => {
    const forced = await undo({ session: "s1", callId: "call-1", force: true });
    assert.equal(forced.status, 200, JSON.stringify(forced.body));
    assert.equal(fixture.notes(), "original\n");
    const listed = await fetch(`${base}/api/checkpoints?session=s1`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: AbortSignal.timeout(10_000),
    });
    const body = await listed.json();
    assert.equal(
      body.checkpoints.find((c: { callId: string }) => c.callId === "call-1").state,
      "undone",
    );
  });
});
