// `hookscope show` and `hookscope tail` print the effects decisions of staged runs and `show`
// lists the session's checkpoints: a real session on PostgreSQL whose bash calls (real bubblewrap
// and overlayfs) are denied, asked, approved and committed, then undone with `hookscope undo`.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectSandbox } from "../../action/coding/mod.ts";
import { Session } from "../../session/mod.ts";
import { PostgresStore } from "../../store/postgres/mod.ts";
import { main } from "../../cli/main.ts";
import { tailCommand } from "../../cli/tail.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
} from "../store/postgres_fixture.ts";
import { codingBranch } from "../action/coding/_effects_agent.ts";

async function cli(args: string[]): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const io = { out: (t: string) => lines.push(t), err: (t: string) => lines.push(t) };
  const code = await main(args, io);
  return { code, text: lines.join("\n") };
}

describe("hookscope show and tail with staged runs (PostgreSQL, bubblewrap)", () => {
  const admin = adminSql(1);
  const schemas = new Set<string>();
  let base: string;
  before(async () => {
    await assertPostgresAnswers(admin);
    const info = await detectSandbox();
    assert.equal(info.effects, "overlay", `overlayfs must mount: ${info.effectsReason}`);
    base = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-effects-cli-")));
  });
  after(async () => {
    await dropSchemas(admin, schemas).catch(() => {});
    await admin.end({ timeout: 5 });
    rmSync(base, { recursive: true, force: true });
  });

  it("show prints decisions, commits and refusals and lists checkpoints; tail prints the same lines", async () => {
    const schema = freshSchema("hs_effects_cli");
    schemas.add(schema);
    const url = `${PG_URL}?schema=${schema}`;
    const ws = join(base, "ws");
    const state = join(base, "state");
    mkdirSync(join(ws, "victim"), { recursive: true });
    writeFileSync(join(ws, "victim", "file"), "precious\n");
    const store = await PostgresStore.open(url);
    let sessionId: string;
    try {
      const session = new Session({ store });
      session.hooks.on(
        "tool.effects",
        ({ changes }) =>
          changes.some((c) => c.path === "blocked.txt")
            ? { decision: "deny", reason: "not that file" }
            : undefined,
      );
      await session.start();
      const branch = codingBranch(session, ws, state);
      const act = (command: string, callId: string) =>
        branch.act({ function: "bash", arguments: { command } }, {
          callId,
          approve: () => ({ approve: true, by: "ana" }),
        });
      await act("echo hi > made.txt", "t1");
      await act("echo no > blocked.txt", "t2");
      await act("rm -r victim", "t3");
      await session.drainSignals();
      await branch.drainSignals();
      sessionId = session.id;
    } finally {
      await store.close();
    }
    const shown = await cli(["show", url, sessionId]);
    assert.equal(shown.code, 0, shown.text);
    for (
      const line of [
        /EffectsDecided +EFFECTS ALLOW bash call t1 by keepDataPolicy \(1 created\)/,
        /EffectsCommitted +COMMITTED bash call t1 \(1 created\) checkpoint /,
        /EffectsDecided +EFFECTS DENY bash call t2 by tool\.effects handler: not that file/,
        /EffectsDiscarded +NOT APPLIED bash call t2 \(1 created\): not that file/,
        /EffectsDecided +EFFECTS ASK bash call t3 by keepDataPolicy: The command deletes 1/,
        /ApprovalRequested +ASK bash call t3 \[change set: 2 deleted\]/,
        /ApprovalAnswered +APPROVED bash call t3 by ana/,
        /EffectsCommitted +COMMITTED bash call t3 \(2 deleted\) checkpoint /,
        /checkpoints \(undo one with: hookscope undo/,
        /t1 +bash .* 1 created .* committed/,
        /t3 +bash .* 2 deleted .* committed/,
      ]
    ) assert.match(shown.text, line);
    const undone = await cli(["undo", url, "t3", "--effects-dir", state, "--by", "ana"]);
    assert.equal(undone.code, 0, undone.text);
    const again = await cli(["show", url, sessionId]);
    assert.match(again.text, /ChangesUndone +UNDONE bash call t3 \(1 path\(s\) restored\) by ana/);
    assert.match(again.text, /t3 +bash .* 2 deleted .* undone /);

    const lines: string[] = [];
    const stop = new AbortController();
    const tailed = tailCommand([url, sessionId, "--all"], {
      out: (t) => {
        lines.push(t);
        if (t.includes("ChangesUndone")) stop.abort();
      },
      err: () => {},
    }, { signal: stop.signal });
    const timer = setTimeout(() => stop.abort(), 30_000);
    assert.equal(await tailed, 0);
    clearTimeout(timer);
    const text = lines.join("\n");
    assert.match(text, /EffectsDecided +EFFECTS ASK bash call t3 by keepDataPolicy/);
    assert.match(text, /EffectsCommitted +COMMITTED bash call t3 \(2 deleted\) checkpoint /);
    assert.match(text, /EffectsDiscarded +NOT APPLIED bash call t2/);
    assert.match(text, /ChangesUndone +UNDONE bash call t3/);
  });
});
