// The console end to end in headless Chromium (playwright-core, /usr/bin/chromium): a run stops
// for approval, `hookscope console` (a subprocess) shows the call live, a click approves it, the
// run resumes in another process and the tool runs exactly once; a rejection with a reason
// reaches the model; arguments with markup stay text; and, over SQLite and over PostgreSQL, the
// first paint of a 10 000-signal session and the latency from a signal written (by this process)
// to its row on the page are measured and printed (never asserted as a speed).
// HOOKSCOPE_SCREENSHOTS=docs writes the screenshots used in the README to docs/.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { connect, createServer, type Socket } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { Session } from "../../mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { consoleHandler } from "../../console/mod.ts";
import { listen } from "../../cli/_http_listen.ts";
import { PostgresStore } from "../../store/postgres/mod.ts";
import type { SessionStore } from "../../store/mod.ts";
import { type OpenAIServer, startOpenAIServer } from "../fixtures/openai_server.ts";
import { CHROMIUM, CHROMIUM_FLAGS, chromiumEnv } from "../fixtures/chromium.ts";
import {
  approvalScript,
  approvalTools,
  askBeforeNotes,
  messagesOf,
  modelFor,
} from "../session/_approval_agent.ts";
import { waitingRun } from "../store/conformance_runs.ts";
import { undoFixture } from "./_undo_fixture.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
  runnerArgs,
} from "../store/postgres_fixture.ts";

// The page's globals, as the callbacks below see them inside Chromium.
interface PageGlobals {
  document: {
    getElementById(id: string): { textContent: string | null } | null;
    body: { dataset: Record<string, string | undefined> };
  };
  __pwned?: number;
  __probes?: number[];
}

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const CHILD = join(ROOT, "tests/session/_approval_child.ts");
const TOKEN = "console-test-token";
const dir = mkdtempSync(join(tmpdir(), "hookscope-console-"));
const db = join(dir, "console.db");
const shots = process.env.HOOKSCOPE_SCREENSHOTS === "docs" ? join(ROOT, "docs") : dir;
const servers: OpenAIServer[] = [];
const undo = undoFixture(join(dir, "undo"));
let store: SqliteStore;
let base: string;
const consoles: ChildProcess[] = [];
const schemas: string[] = [];
let context: BrowserContext;
let page: Page;
let profile: string;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function resumeInChild(env: Record<string, string>): Promise<Record<string, unknown>> {
  const { command, args } = runnerArgs(CHILD);
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout!.on("data", (c) => (out += c));
    child.stderr!.on("data", (c) => (err += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = out.trim().split("\n").filter((l) => l.startsWith("{")).at(-1);
      if (code !== 0 || line === undefined) fail(new Error(`resume exited ${code}: ${err}${out}`));
      else done(JSON.parse(line));
    });
  });
}

async function stoppedSession(name: string, terms?: Record<string, unknown>) {
  const server = await startOpenAIServer(approvalScript());
  servers.push(server);
  const log = join(dir, `${name}.log`);
  const session = new Session({
    id: name,
    store,
    model: modelFor(server.baseURL),
    defaultBranch: false,
  });
  session.newBranch({ model: modelFor(server.baseURL), tools: approvalTools(log) });
  if (terms === undefined) askBeforeNotes(session);
  else {
    session.hooks.on(
      "tool.pre",
      ({ toolName }) =>
        toolName === "note"
          ? { decision: "ask", reason: "notes need a person's approval", ...terms }
          : undefined,
      { name: "notes-policy" },
    );
  }
  await session.start();
  const stopped = await session.branches[0].operate("take a note");
  assert.equal(stopped.stoppedBy, "approval");
  await session.drainSignals();
  const notes = () => {
    try {
      return readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    } catch {
      return [];
    }
  };
  return { server, log, session, stopped, notes };
}

/** Starts `hookscope console DB` in its own process; resolves to its address. */
async function startConsole(
  target: string,
  extra: readonly string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const { command, args } = runnerArgs(join(ROOT, "cli/main.ts"));
  const child = spawn(command, [...args, "console", target, "--port", "0", ...extra], {
    cwd: ROOT,
    env: { ...process.env, HOOKSCOPE_CONSOLE_TOKEN: `ana=${TOKEN}`, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  consoles.push(child);
  const url = await within(
    new Promise<string>((done, fail) => {
      let out = "";
      child.stdout!.on("data", (chunk) => {
        out += chunk;
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) done(match[1]);
      });
      child.once("exit", (code) => fail(new Error(`console exited ${code}`)));
    }),
    60_000,
    "hookscope console to listen",
  );
  return { child, url };
}

/** Opens the console at `url` in the page and gives it the token. */
async function signIn(url: string): Promise<void> {
  await page.goto(url, { timeout: 30_000 });
  await page.fill("#token", TOKEN);
  await page.click("#auth button[type=submit]");
  await page.waitForFunction(
    () =>
      (globalThis as unknown as PageGlobals).document.getElementById("who")?.textContent ===
        "answering as ana",
    null,
    { timeout: 20_000 },
  );
}

before(async () => {
  store = await SqliteStore.open(db);
  ({ url: base } = await startConsole(db, ["--effects-dir", undo.effectsDir]));
  profile = mkdtempSync(join(tmpdir(), "hookscope-console-chromium-"));
  context = await within(
    chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_FLAGS],
      env: chromiumEnv(profile),
      timeout: 60_000,
      viewport: { width: 1280, height: 860 },
    }),
    90_000,
    "Chromium to start",
  );
  page = context.pages()[0] ?? await context.newPage();
  await signIn(base);
});

after(async () => {
  await context?.close();
  for (const child of consoles) child.kill("SIGTERM");
  if (schemas.length > 0) {
    const admin = adminSql();
    await dropSchemas(admin, schemas).catch(() => {});
    await admin.end();
  }
  for (const server of servers) await server.close();
  await store?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe("the console in a real browser", () => {
  it("a run pauses, the console shows the call live, a click approves it, another process resumes it and the tool runs once", async () => {
    // The hook that asks gives a person eight hours and names who may answer.
    const { stopped, notes, server } = await stoppedSession("night-shift", {
      expiresInMs: 8 * 3_600_000,
      answerableBy: ["ana", "bo"],
    });
    const card = page.locator(`#pending li[data-run="${stopped.runId}"]`);
    await card.waitFor({ timeout: 20_000 });
    assert.match(
      await card.locator(".terms").textContent() ?? "",
      /Who may answer: ana, bo · expires: .+/,
    );
    assert.match(await card.textContent() ?? "", /by notes-policy/);
    assert.match(await page.title(), /^\(\d+ waiting\) hookscope console$/);
    assert.match(await card.locator("pre.args").textContent() ?? "", /"text": "draft 1"/);
    assert.match(await card.textContent() ?? "", /notes need a person's approval/);
    await page.screenshot({ path: join(shots, "console_approvals.png") });
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await page.locator(`#pending li.answered[data-run="${stopped.runId}"]`).waitFor({
      timeout: 20_000,
    });
    const run = await store.getRun(stopped.runId);
    assert.equal(run?.answers.note_1?.by, "ana");
    assert.equal(run?.answers.note_1?.argsHash, stopped.pending![0].argsHash);
    const result = await resumeInChild({
      DB: db,
      SESSION: "night-shift",
      RUN: stopped.runId,
      BASE_URL: server.baseURL,
      LOG: join(dir, "night-shift.log"),
    });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(notes(), [{ text: "draft 1" }]);
    // The timeline shows what happened, with the answer.
    await page.goto(`${base}/#/s/night-shift`);
    await page.locator('#timeline li[data-kind="ApprovalAnswered"]').first().waitFor({
      timeout: 20_000,
    });
    await page.locator("#timeline li[data-message]", { hasText: "done:" }).waitFor({
      timeout: 20_000,
    });
    // Each message once, with its content: no empty MessageAdded row beside it.
    assert.equal(await page.locator('#timeline li[data-kind="MessageAdded"]').count(), 0);
    assert.equal(await page.locator("#timeline li", { hasText: "take a note" }).count(), 1);
    // tool.post shows what the call returned (its arguments are on the tool.pre row).
    const posts = page.locator('#timeline li[data-kind="HookSignal"][data-point="tool.post"]');
    assert.equal(await posts.count(), 2);
    assert.match(
      await posts.nth(0).locator("pre.result").textContent() ?? "",
      /"seen": "a tidy room"/,
    );
    assert.match(
      await posts.nth(1).locator("pre.result").textContent() ?? "",
      /"saved": "draft 1"/,
    );
    assert.equal(await posts.locator("pre.args").count(), 0);
    // The resume applied ana's stored answer; the row says so.
    assert.match(
      await page.locator('#timeline li[data-kind="ApprovalAnswered"]').first().textContent() ?? "",
      /by ana.*stored answer, applied on resume/,
    );
    await page.screenshot({ path: join(shots, "console_timeline.png"), fullPage: false });
    await page.locator("#pending-empty").waitFor({ state: "visible", timeout: 20_000 });
  });

  it("a rejection with a reason reaches the model and the tool does not run", async () => {
    const { stopped, notes, server } = await stoppedSession("reject-me");
    const card = page.locator(`#pending li[data-run="${stopped.runId}"]`);
    await card.waitFor({ timeout: 20_000 });
    await card.getByLabel("Reason").fill("not at night");
    await card.getByRole("button", { name: "Reject" }).click();
    await page.locator(`#pending li.answered[data-run="${stopped.runId}"]`).waitFor({
      timeout: 20_000,
    });
    const result = await resumeInChild({
      DB: db,
      SESSION: "reject-me",
      RUN: stopped.runId,
      BASE_URL: server.baseURL,
      LOG: join(dir, "reject-me.log"),
    });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(notes(), []);
    const tool = messagesOf(server, 1).find((m) => m.tool_call_id === "note_1");
    assert.match(String(tool?.content), /not at night/);
  });

  it("an expired approval offers no answer; one only others may answer says so", async () => {
    const expired = waitingRun("expired-run", { sessionId: "terms" }, ["e1"]);
    expired.pending[0].sessionId = "terms";
    expired.pending[0].expiresAt = Date.now() - 60_000;
    const others = waitingRun("others-run", { sessionId: "terms" }, ["o1"]);
    others.pending[0].sessionId = "terms";
    others.pending[0].answerableBy = ["bo"];
    await store.saveRun(expired);
    await store.saveRun(others);
    const gone = page.locator('#pending li[data-call="e1"]');
    await gone.waitFor({ timeout: 20_000 });
    assert.match(await gone.textContent() ?? "", /\(expired\).*Expired without an answer/s);
    assert.equal(await gone.getByRole("button").count(), 0);
    const theirs = page.locator('#pending li[data-call="o1"]');
    await theirs.waitFor({ timeout: 20_000 });
    assert.match(await theirs.textContent() ?? "", /Only bo may answer this; you are ana\./);
    assert.equal(await theirs.getByRole("button").count(), 0);
    // The server refuses them too (the page is not the guard).
    for (
      const [runId, callId, why] of [["expired-run", "e1", "expired"], [
        "others-run",
        "o1",
        "not_allowed",
      ]]
    ) {
      const rows = await store.listPendingApprovals({ runId });
      const response = await page.evaluate(
        async ([url, token, body]) => {
          const r = await fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
            body,
          });
          return { status: r.status, body: await r.json() };
        },
        [
          `${base}/api/answer`,
          TOKEN,
          JSON.stringify({ runId, callId, approve: true, argsHash: rows[0].argsHash }),
        ],
      );
      assert.equal(response.status, 409);
      assert.equal(response.body.why, why);
    }
    await store.saveRun({ ...expired, status: "completed", pending: [] });
    await store.saveRun({ ...others, status: "completed", pending: [] });
  });

  it("without a token it asks for one instead of saying nothing waits", async () => {
    const { stopped } = await stoppedSession("no-token-yet");
    const fresh = await context.newPage(); // its own sessionStorage: no token
    try {
      await fresh.goto(base, { timeout: 30_000 });
      await fresh.getByText("Enter the answer token to see what waits.").waitFor({
        timeout: 20_000,
      });
      assert.equal(await fresh.locator("#pending li").count(), 0);
    } finally {
      await fresh.close();
    }
    // Signed in, the call is there.
    await page.locator(`#pending li[data-run="${stopped.runId}"]`).waitFor({ timeout: 20_000 });
    const run = await store.getRun(stopped.runId);
    await store.saveRun({ ...run!, status: "completed", pending: [] });
  });

  it("arguments with HTML and script in them are shown as text", async () => {
    const run = waitingRun("xss-run", { sessionId: "xss" }, ["x1"]);
    run.pending[0].sessionId = "xss";
    run.pending[0].args = {
      command: '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>',
    };
    run.pending[0].argsHash = undefined;
    run.pending[0].reason = "<b>bold?</b>";
    await store.saveRun(run);
    const card = page.locator('#pending li[data-call="x1"]');
    await card.waitFor({ timeout: 20_000 });
    assert.match(await card.locator("pre.args").textContent() ?? "", /<img src=x onerror=/);
    assert.equal(await card.locator("img, script, b").count(), 0);
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as PageGlobals).__pwned),
      undefined,
    );
    assert.match(await card.locator(".reason").textContent() ?? "", /<b>bold\?<\/b>/);
  });

  it("undo: a click undoes a committed change set; one a later call changed is refused in a person's words, with the way on and a confirmed undo anyway", async () => {
    await undo.write(store, "undo-me", "edit-1", "first edit\n");
    await undo.write(store, "undo-me-later", "edit-2", "second edit\n");
    await page.goto(`${base}/#/s/undo-me`);
    const first = page.locator('#checkpoints li[data-undo-call="edit-1"]');
    await first.waitFor({ timeout: 20_000 });
    assert.match(await first.locator("pre.changes").textContent() ?? "", /modified notes\.md/);
    // Nothing forces an undo by accident: no Force box next to Undo.
    assert.equal(await page.locator("#checkpoints input[type=checkbox]").count(), 0);
    await first.getByRole("button", { name: "Undo", exact: true }).click();
    const refusal = first.locator(".refusal");
    await refusal.waitFor({ timeout: 20_000 });
    const said = await refusal.textContent() ?? "";
    assert.match(
      said,
      /Not undone: call edit-2 \(bash\) of session undo-me-later changed notes\.md after this call\./,
    );
    assert.match(said, /Undo call edit-2 first, then this one/);
    assert.doesNotMatch(said, /pass force|undo it first/);
    const link = refusal.getByRole("link", { name: "session undo-me-later" });
    assert.equal(await link.getAttribute("href"), "#/s/undo-me-later");
    assert.equal(undo.notes(), "second edit\n");
    // The way on: the link opens the later call's session, where it can be undone first.
    await link.click();
    const second = page.locator('#checkpoints li[data-undo-call="edit-2"]');
    await second.waitFor({ timeout: 20_000 });
    await second.getByRole("button", { name: "Undo", exact: true }).click();
    await page.getByText(/Undid call edit-2 in .*: 1 path\(s\) restored/).waitFor({
      timeout: 20_000,
    });
    assert.equal(undo.notes(), "first edit\n");
    await second.getByText("Undone.").waitFor({ timeout: 20_000 });
    await page.goto(`${base}/#/s/undo-me`);
    await first.getByRole("button", { name: "Undo", exact: true }).click();
    await page.getByText(/Undid call edit-1/).waitFor({ timeout: 20_000 });
    assert.equal(undo.notes(), "original\n");

    // A later call of the same session: named (no link needed); undoing anyway is offered as
    // its own action, and takes a confirmation that says what is lost.
    await undo.write(store, "undo-me", "edit-3", "third edit\n");
    await undo.write(store, "undo-me", "edit-4", "fourth edit\n");
    await page.goto(`${base}/#/s/undo-me-later`);
    await page.goto(`${base}/#/s/undo-me`);
    const third = page.locator('#checkpoints li[data-undo-call="edit-3"]');
    await third.waitFor({ timeout: 20_000 });
    await third.getByRole("button", { name: "Undo", exact: true }).click();
    await third.locator(".refusal").waitFor({ timeout: 20_000 });
    assert.match(
      await third.locator(".refusal").textContent() ?? "",
      /call edit-4 \(bash\), later in this session, changed notes\.md after this call\. Undo call edit-4 first, then this one/,
    );
    await third.getByRole("button", { name: "Undo anyway…" }).click();
    const confirm = third.locator(".confirm");
    assert.match(
      await confirm.textContent() ?? "",
      /puts notes\.md back as it was before call edit-3, and loses what call edit-4 changed there/,
    );
    await confirm.getByRole("button", { name: "Cancel" }).click();
    assert.equal(await third.locator(".confirm").count(), 0);
    assert.equal(undo.notes(), "fourth edit\n");
    await third.getByRole("button", { name: "Undo anyway…" }).click();
    await third.getByRole("button", { name: "Undo anyway, losing those changes" }).click();
    await page.getByText(/Undid call edit-3/).waitFor({ timeout: 20_000 });
    assert.equal(undo.notes(), "original\n");
    const undone = (await store.listSessionSignals("undo-me")).filter((s) =>
      s.kind === "ChangesUndone"
    );
    assert.deepEqual(
      undone.map((s) => {
        const p = s.payload as { by: string; callId: string; force: boolean };
        return [p.callId, p.by, p.force];
      }),
      [["edit-1", "ana", false], ["edit-3", "ana", true]],
    );
  });

  it("a live stream whose connection dies without closing is dropped and reopened; what was written meanwhile shows", async () => {
    // The console in this process, behind a TCP relay that can stop passing the bytes of the live
    // streams' connections without closing them: what a proxy's idle cut or a sleeping laptop
    // leaves. The keep-alive is short so the page gives up on a silent stream within seconds.
    const handler = consoleHandler(store, { tokens: { ana: TOKEN }, keepAliveMs: 200 });
    const server = await listen(handler, { host: "127.0.0.1", port: 0 });
    // Connections that carried a request for the live stream (a browser reuses connections).
    const streams: { client: Socket; upstream: Socket; dead: boolean }[] = [];
    const sockets: Socket[] = [];
    const relay = createServer((client) => {
      const upstream = connect(server.port, "127.0.0.1");
      sockets.push(client, upstream);
      const pair = { client, upstream, dead: false };
      client.on("data", (chunk: Uint8Array) => {
        const text = new TextDecoder().decode(chunk);
        if (text.startsWith("GET /api/events") && !streams.includes(pair)) streams.push(pair);
        if (!pair.dead) upstream.write(chunk);
      });
      upstream.on("data", (chunk: Uint8Array) => {
        if (!pair.dead) client.write(chunk);
      });
      client.on("error", () => {});
      upstream.on("error", () => {});
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((done) => relay.listen(0, "127.0.0.1", done));
    const port = (relay.address() as { port: number }).port;
    const session = "silent-link";
    await store.insertSessionSignal({
      sessionId: session,
      kind: "BeforeSilence",
      opId: "",
      ts: Date.now(),
      payload: { reason: "first" },
    });
    try {
      await signIn(`http://127.0.0.1:${port}`);
      await page.goto(`http://127.0.0.1:${port}/#/s/${session}`);
      await page.locator('#timeline li[data-kind="BeforeSilence"]').waitFor({ timeout: 20_000 });
      const open = streams.filter((s) => !s.client.destroyed);
      assert.ok(open.length >= 1, "the page follows the live stream through the relay");
      for (const pair of open) pair.dead = true; // no byte passes either way; nothing closes
      await store.insertSessionSignal({
        sessionId: session,
        kind: "AfterSilence",
        opId: "",
        ts: Date.now(),
        payload: { reason: "second" },
      });
      await page.locator('#timeline li[data-kind="AfterSilence"]').waitFor({ timeout: 20_000 });
      assert.equal(await page.locator('#timeline li[data-kind="BeforeSilence"]').count(), 1);
      assert.ok(
        streams.some((s) => !s.dead),
        "the stream was opened again on another connection",
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => relay.close(() => done()));
      await server.close();
      await signIn(base);
    }
  });

  it("a link with a malformed %-escape opens the console as usual", async () => {
    await page.goto("about:blank");
    await page.goto(`${base}/#/s/%ZZ`);
    await page.waitForFunction(
      () =>
        (globalThis as unknown as PageGlobals).document.getElementById("who")?.textContent ===
          "answering as ana",
      null,
      { timeout: 20_000 },
    );
    await page.goto(base);
  });

  it("is usable with the keyboard alone, labels every field, and fits a phone", async () => {
    const { stopped, session } = await stoppedSession("keyboard");
    // A message with no place to break it (a tool's JSON answer with base64 in it) must not
    // widen the page.
    const unbroken = `{"success":true,"kind":"deleted","blob":"${"QUJD".repeat(100)}"}`;
    await session.branches[0].addMessage({ role: "assistant", content: unbroken });
    await session.drainSignals();
    await page.goto(`${base}/#/s/keyboard`);
    const card = page.locator(`#pending li[data-run="${stopped.runId}"]`);
    await card.waitFor({ timeout: 20_000 });
    await page.locator("#timeline li", { hasText: '"kind":"deleted"' }).first().waitFor({
      timeout: 20_000,
    });
    // Every field has a label; every button a name.
    const unlabelled = await page.evaluate(() => {
      const d = (globalThis as unknown as {
        document: {
          querySelectorAll(q: string): ArrayLike<{
            id: string;
            tagName: string;
            textContent: string | null;
            labels?: ArrayLike<unknown> | null;
            getAttribute(name: string): string | null;
          }>;
        };
      }).document;
      const out: string[] = [];
      for (const field of Array.from(d.querySelectorAll("input, textarea, select"))) {
        if ((field.labels?.length ?? 0) === 0 && !field.getAttribute("aria-label")) {
          out.push(`${field.tagName}#${field.id}`);
        }
      }
      for (const button of Array.from(d.querySelectorAll("button"))) {
        if (!(button.textContent ?? "").trim()) out.push(`button#${button.id}`);
      }
      return out;
    });
    assert.deepEqual(unlabelled, []);
    // Tab to this card's Approve button and press Enter: the answer is recorded.
    const approve = card.getByRole("button", { name: "Approve", exact: true });
    let reached = false;
    for (let i = 0; i < 80 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await approve.evaluate((node) =>
        (globalThis as unknown as { document: { activeElement: unknown } }).document
          .activeElement === node
      );
    }
    assert.ok(reached, "the Approve button is reachable with Tab");
    await page.keyboard.press("Enter");
    await page.locator(`#pending li.answered[data-run="${stopped.runId}"]`).waitFor({
      timeout: 20_000,
    });
    assert.equal((await store.getRun(stopped.runId))?.answers.note_1?.by, "ana");
    // An answer is stored, not acted on: the card says what makes the run go on.
    assert.match(
      await page.locator(`#pending li.answered[data-run="${stopped.runId}"] .next`).textContent() ??
        "",
      new RegExp(`hookscope resume DB ${stopped.runId}`),
    );
    // A phone: one column, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const layout = await page.evaluate(() => {
        const g = globalThis as unknown as {
          innerWidth: number;
          document: {
            documentElement: { scrollWidth: number };
            querySelectorAll(q: string): ArrayLike<{ getBoundingClientRect(): { x: number } }>;
          };
        };
        const xs = Array.from(g.document.querySelectorAll("main > section")).map((section) =>
          Math.round(section.getBoundingClientRect().x)
        );
        return { overflow: g.document.documentElement.scrollWidth - g.innerWidth, xs };
      });
      assert.ok(layout.overflow <= 0, `the page is ${layout.overflow} px wider than the phone`);
      assert.equal(new Set(layout.xs).size, 1, `sections side by side: ${layout.xs}`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  /**
   * Fills a session of 10 000 signals through `writer` (another process than the console), opens
   * it at `url` and reads the first paint and the full load; then writes probe signals one at a
   * time and reads, in the page, when each row was added (both clocks are this machine's).
   */
  async function measure(label: string, url: string, writer: SessionStore, feed: string) {
    const session = `big-${label}`;
    await writer.createSession({ id: session, status: "running" });
    const now = Date.now();
    for (let from = 0; from < 10_000; from += 250) {
      await Promise.all(Array.from({ length: 250 }, (_, k) => {
        const i = from + k;
        return writer.insertSessionSignal({
          sessionId: session,
          kind: i % 3 === 0 ? "ToolDenied" : "ToolCalled",
          opId: `c${i}`,
          ts: now + i,
          payload: { toolName: "bash", callId: `c${i}`, hook: "guard", reason: `step ${i}` },
        });
      }));
    }
    await page.goto("about:blank");
    await page.goto(`${url}/#/s/${session}`);
    const dataset = (key: string) =>
      page.evaluate((k) => (globalThis as unknown as PageGlobals).document.body.dataset[k], key);
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobals).document.body.dataset.painted !== undefined,
      null,
      { timeout: 60_000 },
    );
    const painted = Number(await dataset("painted"));
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobals).document.body.dataset.loaded !== undefined,
      null,
      { timeout: 120_000 },
    );
    const loaded = Number(await dataset("loaded"));
    assert.equal(await page.locator("#timeline li").count(), 10_000);
    // The page follows the store's change stream, not a poll of its own.
    assert.equal(await dataset("feed"), feed);
    await page.evaluate(() => {
      const g = globalThis as unknown as PageGlobals & {
        MutationObserver: new (
          f: (records: { addedNodes: { dataset?: Record<string, string> }[] }[]) => void,
        ) => { observe(node: unknown, options: unknown): void };
        document: { getElementById(id: string): unknown };
      };
      g.__probes = [];
      new g.MutationObserver((records) => {
        for (const record of records) {
          for (const node of record.addedNodes) {
            if (node.dataset?.kind === "Probe") g.__probes!.push(Date.now());
          }
        }
      }).observe(g.document.getElementById("timeline"), { childList: true });
    });
    const latencies: number[] = [];
    const probes = 20;
    for (let i = 0; i < probes; i++) {
      // Written at an arbitrary moment, as a signal would be.
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
      const written = Date.now();
      await writer.insertSessionSignal({
        sessionId: session,
        kind: "Probe",
        opId: `p${i}`,
        ts: written,
        payload: { reason: `probe ${i}` },
      });
      await page.waitForFunction(
        (n) => ((globalThis as unknown as PageGlobals).__probes?.length ?? 0) > n,
        i,
        { timeout: 20_000, polling: 5 },
      );
      const shown = await page.evaluate(
        (n) => (globalThis as unknown as PageGlobals).__probes![n],
        i,
      );
      latencies.push(shown - written);
    }
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * probes))];
    console.log(
      `console over ${label}, 10 000-signal session: first paint (first 500 rows) ${
        Math.round(painted)
      } ms, all 10 000 rows ${Math.round(loaded)} ms after navigation; signal written to ` +
        `shown: median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${latencies.at(-1)} ms ` +
        `(${probes} probes; feed ${feed}; load average ${
          loadavg().map((l) => l.toFixed(2)).join(" ")
        })`,
    );
  }

  it("over SQLite: the first paint of a 10 000-signal session and the signal-to-page latency", async () => {
    const writer = await SqliteStore.open(db);
    try {
      await measure("SQLite", base, writer, "probe");
    } finally {
      await writer.close();
    }
  });

  it("over PostgreSQL: the first paint of a 10 000-signal session and the signal-to-page latency", async () => {
    const admin = adminSql();
    try {
      await assertPostgresAnswers(admin);
    } finally {
      await admin.end();
    }
    const schema = freshSchema("hs_console");
    schemas.push(schema);
    const target = `${PG_URL}?schema=${schema}`;
    const writer = await PostgresStore.open(target);
    try {
      const { url } = await startConsole(target);
      await signIn(url);
      await measure("PostgreSQL", url, writer, "notify");
    } finally {
      await writer.close();
    }
  });
});
