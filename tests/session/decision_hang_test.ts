import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AgentSpec, HookTimeoutError, Session, Tool } from "../../mod.ts";
import { FunctionCalling } from "../../action/mod.ts";

/** A step that never settles and says when it started. */
interface Stuck {
  started: Promise<void>;
  never: () => Promise<never>;
}

function stuck(): Stuck {
  let resolve!: () => void;
  const started = new Promise<void>((r) => (resolve = r));
  return {
    started,
    never: () => {
      resolve();
      return new Promise<never>(() => {});
    },
  };
}

interface Case {
  /** The step, as the rejection names it. */
  step: RegExp;
  /** The hook point a deadline names (HookTimeoutError), or null for a non-hook step. */
  point: string | null;
  /** Whether the request/response messages exist when the step hangs. */
  messages: 0 | 2;
  install: (session: Session, hang: Stuck) => ReturnType<Session["newBranch"]>;
}

function tool(hang?: Stuck, post?: Stuck): Tool {
  return new Tool({
    name: "t",
    execute: () => (hang ? hang.never() : "ok"),
    ...(post ? { postprocessor: () => post.never() } : {}),
  });
}

const CASES: Record<string, Case> = {
  "the gate": {
    step: /gate/,
    point: null,
    messages: 0,
    install: (session, hang) => {
      session.gate(() => hang.never());
      const branch = session.newBranch();
      branch.actions.register(tool());
      return branch;
    },
  },
  "a tool.pre handler": {
    step: /tool\.pre/,
    point: "tool.pre",
    messages: 0,
    install: (session, hang) => {
      session.hooks.on("tool.pre", () => hang.never());
      const branch = session.newBranch();
      branch.actions.register(tool());
      return branch;
    },
  },
  "a Tool-scope pre hook": {
    step: /tool "t"/,
    point: null,
    messages: 0,
    install: (session, hang) => {
      const spec = new AgentSpec().pre("t", () => hang.never());
      const branch = session.newBranch({ spec });
      branch.actions.register(tool());
      return branch;
    },
  },
  "the tool function": {
    step: /tool "t"/,
    point: null,
    messages: 0,
    install: (session, hang) => {
      const branch = session.newBranch();
      branch.actions.register(tool(hang));
      return branch;
    },
  },
  "a postprocessor": {
    step: /tool "t"/,
    point: null,
    messages: 0,
    install: (session, hang) => {
      const branch = session.newBranch();
      branch.actions.register(tool(undefined, hang));
      return branch;
    },
  },
  "a tool.post handler": {
    step: /tool\.post/,
    point: "tool.post",
    messages: 0,
    install: (session, hang) => {
      session.hooks.on("tool.post", () => hang.never());
      const branch = session.newBranch();
      branch.actions.register(tool());
      return branch;
    },
  },
  "a message.add handler": {
    step: /message\.add/,
    point: "message.add",
    messages: 2,
    install: (session, hang) => {
      const branch = session.newBranch();
      branch.actions.register(tool());
      session.hooks.on("message.add", () => hang.never());
      return branch;
    },
  },
  "an observer subscriber": {
    step: /observer/,
    point: null,
    messages: 0,
    install: (session, hang) => {
      session.observe({ type: FunctionCalling }, () => hang.never());
      const branch = session.newBranch();
      branch.actions.register(tool());
      return branch;
    },
  },
};

/**
 * The act deadline of the timeoutMs cases. It runs from the start of act, so it must outlast
 * the steps before the hanging one (well under a millisecond, but a loaded machine can pause a
 * process for tens of milliseconds: 50 ms could end act before it reached the step and name
 * another one).
 */
const ACT_DEADLINE_MS = 250;

/** Rejects when `pending` has not settled after a generous wait (not a speed check). */
function settlesSoon<T>(pending: Promise<T>, label: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: act did not settle`)), 5_000);
  });
  return Promise.race([pending, watchdog]).finally(() => clearTimeout(timer));
}

function checkRecord(branch: ReturnType<Session["newBranch"]>, expected: 0 | 2): void {
  const roles = branch.messages.map((m) => m.role);
  assert.deepEqual(roles, expected === 2 ? ["action_request", "action_response"] : []);
}

describe("nothing hangs: act(request, { signal, timeoutMs }) (X23)", () => {
  for (const [label, c] of Object.entries(CASES)) {
    it(`${label} that never settles: an abort ends act, naming the step`, async () => {
      const session = new Session();
      const hang = stuck();
      const branch = c.install(session, hang);
      const controller = new AbortController();
      const pending = branch.act({ function: "t", arguments: {} }, { signal: controller.signal });
      const caught = pending.then(() => null, (e: unknown) => e);
      await settlesSoon(hang.started, `${label} start`);
      controller.abort(new Error("user stop"));
      const error = await settlesSoon(caught, label) as Error;
      assert.ok(error instanceof Error, `rejects: ${String(error)}`);
      assert.equal(error.name, "AbortError");
      assert.match(error.message, c.step);
      checkRecord(branch, c.messages);
    });

    it(`${label} that never settles: timeoutMs ends act, naming the step`, async () => {
      const session = new Session();
      const hang = stuck();
      const branch = c.install(session, hang);
      const error = await settlesSoon(
        branch.act({ function: "t", arguments: {} }, { timeoutMs: ACT_DEADLINE_MS }).then(
          () => null,
          (e: unknown) => e,
        ),
        label,
      ) as Error;
      assert.ok(error instanceof Error, `rejects: ${String(error)}`);
      if (c.point !== null) {
        assert.ok(error instanceof HookTimeoutError, `${error.name}: ${error.message}`);
        assert.equal(error.point, c.point);
        assert.equal(error.timeoutMs, ACT_DEADLINE_MS);
      } else {
        assert.equal(error.name, "TimeoutError");
        assert.match(error.message, c.step);
      }
      checkRecord(branch, c.messages);
    });
  }

  it("an already aborted signal runs nothing", async () => {
    const session = new Session();
    const branch = session.newBranch();
    let ran = 0;
    branch.actions.register(new Tool({ name: "t", execute: () => void ran++ }));
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(
      branch.act({ function: "t", arguments: {} }, { signal: controller.signal }),
      (e: Error) => e.name === "AbortError",
    );
    assert.equal(ran, 0);
    assert.equal(branch.messages.length, 0);
  });

  it("a tool.pre handler's own timeoutMs fails closed without any act deadline", async () => {
    const session = new Session();
    const branch = session.newBranch();
    let ran = 0;
    branch.actions.register(new Tool({ name: "t", execute: () => void ran++ }));
    session.hooks.on("tool.pre", () => new Promise(() => {}), { timeoutMs: 30, name: "slow" });
    await assert.rejects(
      branch.act({ function: "t", arguments: {} }),
      (e) => e instanceof HookTimeoutError && e.hook === "slow",
    );
    assert.equal(ran, 0);
  });

  it("the tool sees the act's signal abort on the deadline", async () => {
    const session = new Session();
    const branch = session.newBranch();
    let seen: AbortSignal | undefined;
    let aborted!: () => void;
    const sawAbort = new Promise<void>((r) => (aborted = r));
    branch.actions.register(
      new Tool({
        name: "t",
        execute: (_a, context) => {
          seen = context.signal;
          context.signal.addEventListener("abort", () => aborted());
          return new Promise(() => {});
        },
      }),
    );
    await assert.rejects(
      branch.act({ function: "t", arguments: {} }, { timeoutMs: 30 }),
      (e: Error) => e.name === "TimeoutError",
    );
    await settlesSoon(sawAbort, "tool signal");
    assert.equal(seen?.aborted, true);
  });

  it("a timeoutMs above what a timer holds is refused; Infinity is no deadline", async () => {
    // setTimeout fires a longer delay after 1 ms: both had failed the act at once.
    const session = new Session();
    const branch = session.newBranch();
    let ran = 0;
    branch.actions.register(
      new Tool({
        name: "t",
        execute: async () => {
          await new Promise((r) => setTimeout(r, 20));
          ran++;
          return "done";
        },
      }),
    );
    await assert.rejects(
      branch.act({ function: "t", arguments: {} }, { timeoutMs: 3e9 }),
      (e: Error) =>
        e instanceof TypeError &&
        e.message ===
          "Cannot act: timeoutMs must be at most 2147483647 (about 24.8 days), or Infinity for no deadline; got 3000000000",
    );
    assert.equal(ran, 0);
    for (const timeoutMs of [Infinity, 2_147_483_647]) {
      const result = await branch.act({ function: "t", arguments: {} }, { timeoutMs });
      assert.equal(result.output, "done");
    }
    assert.equal(ran, 2);
  });
});
