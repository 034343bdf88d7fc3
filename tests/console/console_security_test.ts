// The console's HTTP side on a real 127.0.0.1 server: no answer without the token, cross-site
// posts refused, bodies past the cap refused, the first answer wins, and the page's script builds
// its elements from text only (so arguments with markup in them are never read as HTML).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { consoleHandler } from "../../console/handler.ts";
import { listen, type Listening } from "../../cli/_http_listen.ts";
import { CONSOLE_HTML, CONSOLE_JS } from "../../console/_page.ts";
import { MemoryStore } from "../../store/memory_store.ts";
import { waitingRun } from "../store/conformance_runs.ts";

const TOKEN = "t0ken-for-tests";
let store: MemoryStore;
let server: Listening;
const stopping = new AbortController();
let base: string;

before(async () => {
  store = new MemoryStore();
  const run = waitingRun("r1", {}, ["c1", "c2"]);
  run.pending[0].args = { command: "<script>alert(1)</script><img src=x onerror=alert(2)>" };
  run.pending[0].argsHash = undefined;
  await store.saveRun(run);
  server = await listen(
    consoleHandler(store, { tokens: { ana: TOKEN }, maxBodyBytes: 4096, signal: stopping.signal }),
    { host: "127.0.0.1", port: 0 },
  );
  base = `http://127.0.0.1:${server.port}`;
});
after(async () => {
  stopping.abort();
  await server.close();
  await store.close();
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/api/answer`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.json() };
}

async function hashOf(callId: string): Promise<string> {
  const rows = await store.listPendingApprovals({ callId });
  return rows[0].argsHash!;
}

describe("console security", () => {
  it("serves the page with a strict content security policy and no inline script", async () => {
    const response = await fetch(`${base}/`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(response.status, 200);
    const csp = response.headers.get("content-security-policy") ?? "";
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    const html = await response.text();
    assert.equal(html, CONSOLE_HTML);
    assert.doesNotMatch(html, /<script>(?!<\/script>)/);
    // The script never parses store data as markup.
    assert.doesNotMatch(CONSOLE_JS, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it("refuses every API read and every answer without the token", async () => {
    for (
      const path of [
        "/api/pending",
        "/api/sessions",
        "/api/sessions/s1/timeline",
        "/api/events?session=s1",
        "/api/whoami",
      ]
    ) {
      const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(response.status, 401, path);
      await response.body?.cancel();
    }
    const hash = await hashOf("c1");
    const none = await post({ runId: "r1", callId: "c1", approve: true, argsHash: hash }, {
      authorization: "",
    });
    assert.equal(none.status, 401);
    const wrong = await post({ runId: "r1", callId: "c1", approve: true, argsHash: hash }, {
      authorization: "Bearer nope",
    });
    assert.equal(wrong.status, 401);
    assert.equal((await store.getRun("r1"))?.answers.c1, undefined);
  });

  it("refuses cross-site posts (Sec-Fetch-Site, Origin) and form content types", async () => {
    const hash = await hashOf("c1");
    const answer = { runId: "r1", callId: "c1", approve: true, argsHash: hash };
    assert.equal((await post(answer, { "sec-fetch-site": "cross-site" })).status, 403);
    assert.equal((await post(answer, { "sec-fetch-site": "same-site" })).status, 403);
    assert.equal((await post(answer, { origin: "https://evil.example" })).status, 403);
    const form = await post("runId=r1&callId=c1&approve=true", {
      "content-type": "application/x-www-form-urlencoded",
    });
    assert.equal(form.status, 415);
    assert.equal((await store.getRun("r1"))?.answers.c1, undefined);
  });

  it("refuses bodies past the cap", async () => {
    const big = {
      runId: "r1",
      callId: "c1",
      approve: false,
      argsHash: "x",
      reason: "x".repeat(10_000),
    };
    const response = await post(big);
    assert.equal(response.status, 413);
    assert.equal((await store.getRun("r1"))?.answers.c1, undefined);
  });

  it("shows the arguments as data (markup inside stays text) and records the token holder as who answered; a second answer is refused", async () => {
    const pending = await fetch(`${base}/api/pending`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: AbortSignal.timeout(10_000),
    });
    assert.match(pending.headers.get("content-type") ?? "", /application\/json/);
    const rows = await pending.json();
    assert.equal(rows[0].args.command, "<script>alert(1)</script><img src=x onerror=alert(2)>");
    const stale = await post({
      runId: "r1",
      callId: "c1",
      approve: true,
      argsHash: "0".repeat(64),
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.why, "args_changed");
    const ok = await post({
      runId: "r1",
      callId: "c1",
      approve: false,
      reason: "no",
      argsHash: rows[0].argsHash,
      by: "mallory",
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.answer.by, "ana");
    const again = await post({
      runId: "r1",
      callId: "c1",
      approve: true,
      argsHash: rows[0].argsHash,
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.why, "already_answered");
    assert.equal(again.body.answer.by, "ana");
    // The very same request sent again (a replay) is refused too, naming the standing answer.
    const replayed = await post({
      runId: "r1",
      callId: "c1",
      approve: false,
      reason: "no",
      argsHash: rows[0].argsHash,
    });
    assert.equal(replayed.status, 409);
    assert.equal(replayed.body.why, "already_answered");
    assert.equal(replayed.body.answer.answeredAt, ok.body.answer.answeredAt);
  });

  it("a change-set approval is answered with the change set the page showed", async () => {
    const run = waitingRun("fx", {}, ["e1"]);
    const hash = "c".repeat(64);
    run.pending[0].effects = {
      changes: [{ path: "victim/file", kind: "deleted", type: "file", bytesBefore: 9 }],
      count: 1,
      hash,
    };
    await store.saveRun(run);
    const listed = await fetch(`${base}/api/pending`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: AbortSignal.timeout(10_000),
    });
    const rows = (await listed.json()) as { callId: string; effects?: { hash: string } }[];
    assert.equal(rows.find((r) => r.callId === "e1")?.effects?.hash, hash);
    const argsHash = run.pending[0].argsHash;
    // What a page that did not show the change set would send: refused.
    const blind = await post({ runId: "fx", callId: "e1", approve: true, argsHash });
    assert.equal(blind.status, 409);
    assert.equal(blind.body.why, "args_changed");
    const seen = await post({
      runId: "fx",
      callId: "e1",
      approve: true,
      argsHash,
      effectsHash: hash,
    });
    assert.equal(seen.status, 200, JSON.stringify(seen.body));
    assert.equal(seen.body.answer.effectsHash, hash);
    // The page sends the change set's hash and shows its entries; it offers no argument edit.
    assert.match(CONSOLE_JS, /effectsHash: row\.effects\.hash/);
    assert.match(CONSOLE_JS, /aria-label": "change set"/);
  });

  it("an answer whose updatedArgs the store would have to cut is refused with 400 and not stored", async () => {
    const own = new MemoryStore();
    await own.saveRun(waitingRun("r9"));
    const argsHash = (await own.listPendingApprovals({ runId: "r9" }))[0].argsHash!;
    const open = await listen(consoleHandler(own, { tokens: { ana: TOKEN } }), {
      host: "127.0.0.1",
      port: 0,
    });
    try {
      const send = async (updatedArgs: string) => {
        const response = await fetch(`http://127.0.0.1:${open.port}/api/answer`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
          body: `{"runId":"r9","callId":"c1","approve":true,"argsHash":"${argsHash}",` +
            `"updatedArgs":${updatedArgs}}`,
          signal: AbortSignal.timeout(10_000),
        });
        return { status: response.status, body: await response.json() };
      };
      const deep = await send(`{"a":${"[".repeat(6000)}${"]".repeat(6000)}}`);
      assert.equal(deep.status, 400, JSON.stringify(deep.body));
      assert.match(deep.body.error, /updatedArgs\.a\[0\]\[0\].* nests deeper than 64 levels/);
      const wide = await send(`{"list":[${Array.from({ length: 1500 }, (_, i) => i).join(",")}]}`);
      assert.equal(wide.status, 400, JSON.stringify(wide.body));
      assert.match(wide.body.error, /updatedArgs\.list is an array of 1500 items/);
      assert.deepEqual((await own.getRun("r9"))?.answers, {});
    } finally {
      await open.close();
      await own.close();
    }
  });

  it("a timeline path whose session id is not valid percent-encoding is a 400, not a 500", async () => {
    for (const id of ["%ZZ", "%E0%A4%A", "%C0%AF"]) {
      const response = await fetch(`${base}/api/sessions/${id}/timeline`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        signal: AbortSignal.timeout(10_000),
      });
      assert.equal(response.status, 400, id);
      assert.match((await response.json()).error, /not valid percent-encoding/);
    }
    const fine = await fetch(`${base}/api/sessions/${encodeURIComponent("s 1%")}/timeline`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(fine.status, 200);
    await fine.body?.cancel();
  });

  it("a console without tokens is read-only", async () => {
    const readOnly = await listen(consoleHandler(store), { host: "127.0.0.1", port: 0 });
    try {
      const url = `http://127.0.0.1:${readOnly.port}`;
      const list = await fetch(`${url}/api/pending`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(list.status, 200);
      await list.body?.cancel();
      const answer = await fetch(`${url}/api/answer`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          runId: "r1",
          callId: "c2",
          approve: true,
          argsHash: await hashOf("c2"),
        }),
        signal: AbortSignal.timeout(10_000),
      });
      assert.equal(answer.status, 403);
      await answer.body?.cancel();
    } finally {
      await readOnly.close();
    }
  });

  it("a live stream names its keep-alive for the page's watchdog; a bad keepAliveMs is a TypeError", async () => {
    const store = new MemoryStore();
    const stopping = new AbortController();
    const handler = consoleHandler(store, { keepAliveMs: 50, signal: stopping.signal });
    const response = await handler(new Request("http://127.0.0.1/api/events"));
    assert.equal(response.headers.get("x-hookscope-keep-alive"), "50");
    const reader = response.body!.getReader();
    const seen: string[] = [];
    const decoder = new TextDecoder();
    while (!seen.join("").includes(": keep-alive")) {
      const { done, value } = await reader.read();
      if (done) break;
      seen.push(decoder.decode(value));
    }
    assert.match(seen.join(""), /: keep-alive\n\n/);
    await reader.cancel();
    stopping.abort();
    for (const bad of [0, -1, Number.NaN, "5000", 700_000]) {
      assert.throws(
        () => consoleHandler(store, { keepAliveMs: bad as number }),
        (error: unknown) =>
          error instanceof TypeError &&
          /keepAliveMs must be a number from 10 to 600000/.test(error.message),
      );
    }
  });
});
