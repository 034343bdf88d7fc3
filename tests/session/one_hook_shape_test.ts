// One hook shape: a function written once against `ToolCallContext` (`ToolResultContext`,
// `ToolErrorContext`) is registered as a `Tool` processor, an `AgentSpec` hook and a session
// `tool.*` handler, and decides the same way in each — deny, ask (pending, approved inline,
// rejected inline), allow with `updatedArgs` and `context`; post: `updatedResult` and `context`;
// error: `updatedResult` recovers, with `context`. The model and the caller see the same thing
// whichever place the function is registered in.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ActionResult,
  AgentSpec,
  ApprovalRequested,
  ApprovalRequiredError,
  type Branch,
  type PendingApproval,
  Session,
  Tool,
  type ToolCallContext,
  ToolDenied,
  ToolDeniedError,
  type ToolErrorContext,
  type ToolErrorDecision,
  type ToolPostDecision,
  type ToolPreDecision,
  type ToolResultContext,
} from "../../mod.ts";

const PLACES = ["processor", "spec", "session"] as const;
type Place = typeof PLACES[number];

/** What one call did, in terms every place can be compared on. */
interface Seen {
  readonly contexts: ToolCallContext[];
  readonly ran: string[];
}

/** The pre hook, written once. */
function policyFor(seen: Seen): (context: ToolCallContext) => ToolPreDecision {
  return function policy(context: ToolCallContext): ToolPreDecision {
    seen.contexts.push(context);
    const command = String(context.args.command);
    if (command.startsWith("rm ")) return { decision: "deny", reason: "no rm" };
    if (command.startsWith("deploy")) return { decision: "ask", reason: "deploys need a person" };
    if (command !== command.trim()) {
      return {
        decision: "allow",
        updatedArgs: { ...context.args, command: command.trim() },
        context: "trimmed the command",
      };
    }
    return undefined;
  };
}

/** The post hook, written once. */
function shout({ result }: ToolResultContext): ToolPostDecision {
  return { updatedResult: String(result).toUpperCase(), context: "shouted" };
}

/** The error hook, written once. */
function fallback({ error, toolName }: ToolErrorContext): ToolErrorDecision {
  return {
    updatedResult: { recovered: `${toolName}: ${(error as Error).message}` },
    context: "recovered from a failure",
  };
}

/** A session with a `bash` tool whose hooks are the three functions, registered at `place`. */
function setup(place: Place): { session: Session; branch: Branch; seen: Seen } {
  const seen: Seen = { contexts: [], ran: [] };
  const policy = policyFor(seen);
  const session = new Session();
  const execute = ({ command }: { command: string }) => {
    if (command === "fail") throw new Error("disk full");
    seen.ran.push(command);
    return `ran ${command}`;
  };
  let branch: Branch;
  if (place === "processor") {
    branch = session.newBranch();
    branch.actions.register(
      new Tool({
        name: "bash",
        execute,
        preprocessor: policy,
        postprocessor: shout,
        errorProcessor: fallback,
      }),
    );
  } else if (place === "spec") {
    const spec = new AgentSpec().pre("bash", policy).post("bash", shout).onError("bash", fallback);
    branch = session.newBranch({ spec });
    branch.actions.register(new Tool({ name: "bash", execute }));
  } else {
    session.hooks.on("tool.pre", policy);
    session.hooks.on("tool.post", shout);
    session.hooks.on("tool.error", fallback);
    branch = session.newBranch();
    branch.actions.register(new Tool({ name: "bash", execute }));
  }
  return { session, branch, seen };
}

/** The last message's content: what the model reads for the call. */
function told(branch: Branch): Record<string, unknown> {
  return branch.messages.at(-1)!.content as Record<string, unknown>;
}

async function signalsOf<T>(session: Session, type: new (...args: never[]) => T): Promise<T[]> {
  await session.drainSignals();
  return session.observer.byType(type as never) as T[];
}

describe("one hook shape: the same function decides the same way in every place", () => {
  const outcomes = new Map<Place, unknown[]>();
  const record = (place: Place, value: unknown) => {
    const list = outcomes.get(place) ?? [];
    list.push(value);
    outcomes.set(place, list);
  };

  for (const place of PLACES) {
    it(`as ${place}: deny rejects with ToolDeniedError and the model reads the reason`, async () => {
      const { session, branch, seen } = setup(place);
      const error = await branch.act(
        { function: "bash", arguments: { command: "rm -r x" } },
        { callId: "d1" },
      ).then(() => null, (e: unknown) => e);
      assert.ok(error instanceof ToolDeniedError, String(error));
      assert.equal(error.reason, "no rm");
      assert.equal(error.by, "hook");
      assert.equal(error.hook, "policy");
      assert.equal(error.toolName, "bash");
      assert.equal(error.callId, "d1");
      assert.deepEqual(seen.ran, []);
      assert.deepEqual(told(branch).output, { error: "Denied: no rm", reason: "no rm" });
      const denied = await signalsOf(session, ToolDenied);
      assert.equal(denied.length, 1);
      const data = denied[0].data as { reason?: string; hook?: string; callId: string };
      assert.deepEqual(
        { reason: data.reason, hook: data.hook, callId: data.callId },
        { reason: "no rm", hook: "policy", callId: "d1" },
      );
      record(place, { deny: told(branch), by: error.by, hook: error.hook });
    });

    it(`as ${place}: ask without an approver is a pending approval; nothing runs or is written`, async () => {
      const { session, branch, seen } = setup(place);
      const before = branch.messages.length;
      const error = await branch.act(
        { function: "bash", arguments: { command: "deploy prod" } },
        { callId: "a1", runId: "r1" },
      ).then(() => null, (e: unknown) => e);
      assert.ok(error instanceof ApprovalRequiredError, String(error));
      const approval = error.approval;
      assert.equal(approval.callId, "a1");
      assert.equal(approval.runId, "r1");
      assert.equal(approval.branchId, branch.id);
      assert.equal(approval.sessionId, session.id);
      assert.equal(approval.toolName, "bash");
      assert.equal(approval.reason, "deploys need a person");
      assert.equal(approval.policy, "policy");
      assert.deepEqual(approval.args, { command: "deploy prod" });
      assert.deepEqual(seen.ran, []);
      assert.equal(branch.messages.length, before);
      const requested = await signalsOf(session, ApprovalRequested);
      assert.equal(requested.length, 1);
      assert.equal((requested[0].data as PendingApproval).argsHash, approval.argsHash);
      record(place, { pending: { ...approval, requestedAt: 0, sessionId: "", branchId: "" } });
    });

    it(`as ${place}: ask with an inline approver runs once it approves, and is denied when it rejects`, async () => {
      const { branch, seen } = setup(place);
      const asked: PendingApproval[] = [];
      const result = await branch.act(
        { function: "bash", arguments: { command: "deploy prod" } },
        {
          callId: "a2",
          approve: (pending) => {
            asked.push(pending);
            return true;
          },
        },
      );
      assert.equal(asked.length, 1);
      assert.equal(asked[0].reason, "deploys need a person");
      assert.deepEqual(seen.ran, ["deploy prod"]);
      assert.equal(result.output, "RAN DEPLOY PROD");
      const rejected = await branch.act(
        { function: "bash", arguments: { command: "deploy prod" } },
        { callId: "a3", approve: () => ({ approve: false, reason: "not today", by: "ana" }) },
      ).then(() => null, (e: unknown) => e);
      assert.ok(rejected instanceof ToolDeniedError);
      assert.equal(rejected.by, "approval");
      assert.equal(rejected.hook, "approval by ana");
      assert.deepEqual(told(branch).output, { error: "Denied: not today", reason: "not today" });
      assert.deepEqual(seen.ran, ["deploy prod"]);
      record(place, { approved: result.output, rejected: told(branch) });
    });

    it(`as ${place}: allow with updatedArgs and context runs the rewrite; the context reaches the model`, async () => {
      const { branch, seen } = setup(place);
      const result = await branch.act(
        { function: "bash", arguments: { command: "  ls  " } },
        { callId: "c1" },
      );
      assert.deepEqual(seen.ran, ["ls"]);
      assert.equal(result.output, "RAN LS");
      assert.deepEqual(result.context, ["trimmed the command", "shouted"]);
      assert.deepEqual(result.arguments, { command: "  ls  " });
      const response = told(branch);
      assert.deepEqual(response.context, ["trimmed the command", "shouted"]);
      assert.equal(response.output, "RAN LS");
      record(place, { result, response });
    });

    it(`as ${place}: the context object carries the call's name, id, arguments, signal and source`, async () => {
      const { branch, seen } = setup(place);
      await branch.act({ function: "bash", arguments: { command: "ls" } }, { callId: "x1" });
      const context = seen.contexts[0];
      assert.equal(context.toolName, "bash");
      assert.equal(context.callId, "x1");
      assert.deepEqual({ ...context.args }, { command: "ls" });
      assert.ok(context.signal instanceof AbortSignal);
      assert.equal(context.signal.aborted, false);
      assert.deepEqual(context.source, { kind: "local" });
      record(place, {
        context: {
          toolName: context.toolName,
          callId: context.callId,
          args: { ...context.args },
          source: context.source,
        },
      });
    });

    it(`as ${place}: an error hook's updatedResult recovers the call, with its context`, async () => {
      const { branch } = setup(place);
      const result: ActionResult = await branch.act(
        { function: "bash", arguments: { command: "fail" } },
        { callId: "e1" },
      );
      assert.deepEqual(result.output, { recovered: "bash: disk full" });
      assert.ok(result.context?.includes("recovered from a failure"), String(result.context));
      assert.ok((told(branch).context as string[]).includes("recovered from a failure"));
      record(place, { recovered: result.output });
    });
  }

  it("every place told the model and the caller the same things", () => {
    const [first, ...rest] = PLACES.map((place) => outcomes.get(place));
    assert.equal(first?.length, 6);
    for (const other of rest) assert.deepEqual(other, first);
  });
});
