// wrapAgentTools and answerApproval check what they are given before anything runs: a bad option
// is a TypeError in the library's words, naming it, never a "Cannot read properties of …" later,
// and a misspelt key is refused (it had left the tools under no policy at all).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { run } from "@openai/agents";
import { AgentSpec, Branch, Session } from "../../../mod.ts";
import { answerApproval, wrapAgentTools } from "../../../openai-agents/mod.ts";
import { makeAgent, ScriptedModel } from "./_agent.ts";

const agent = () => makeAgent(new ScriptedModel([]), []);

/** A TypeError whose message is exactly `message`. */
const typeError = (message: string) => (error: unknown): boolean => {
  assert.ok(error instanceof TypeError, String(error));
  assert.equal(error.message, message);
  return true;
};

describe("wrapAgentTools options", () => {
  it("refuses options that are not an object", () => {
    assert.throws(
      () => wrapAgentTools(agent(), null as never),
      typeError("Cannot wrap agent tools: options must be an object; got null"),
    );
  });

  it("refuses a session, branch or spec of another kind", () => {
    assert.throws(
      () => wrapAgentTools(agent(), { session: {} as never }),
      typeError("Cannot wrap agent tools: session must be a Session; got (object)"),
    );
    assert.throws(
      () => wrapAgentTools(agent(), { branch: {} as never }),
      typeError("Cannot wrap agent tools: branch must be a Branch; got (object)"),
    );
    assert.throws(
      () => wrapAgentTools(agent(), { spec: { securityPre: () => {} } as never }),
      typeError("Cannot wrap agent tools: spec must be an AgentSpec; got (object)"),
    );
    assert.throws(
      () => wrapAgentTools(agent(), { approvedBy: "" }),
      typeError('Cannot wrap agent tools: approvedBy must be a non-empty string; got ""'),
    );
  });

  it("refuses a spec the given branch does not carry (it would be left out)", () => {
    const spec = new AgentSpec();
    assert.throws(
      () => wrapAgentTools(agent(), { branch: new Branch(), spec }),
      /Cannot wrap agent tools: spec is not the branch's spec/,
    );
    const wrapped = wrapAgentTools(agent(), { branch: new Branch({ spec }), spec });
    assert.equal(wrapped.tools.length, 2);
  });

  it("refuses an unknown option key (a misspelt session governed nothing)", () => {
    assert.throws(
      () => wrapAgentTools(agent(), { sesion: new Session() } as never),
      typeError(
        'Cannot wrap agent tools: unknown option "sesion"; valid options: session, branch, spec, approvedBy',
      ),
    );
  });
});

describe("answerApproval arguments", () => {
  it("refuses a state that is not a RunState and an item without its rawItem", async () => {
    const session = new Session();
    session.hooks.on("tool.pre", () => ({ decision: "ask" }));
    const model = new ScriptedModel([{ calls: [{ id: "c1", name: "read", args: { path: "a" } }] }]);
    const wrapped = wrapAgentTools(makeAgent(model, []), { session });
    const first = await run(wrapped, "read a");
    assert.equal(first.interruptions.length, 1);
    await assert.rejects(
      answerApproval(null as never, first.interruptions[0], true),
      typeError(
        "Cannot answer approval: state must be a RunState (with approve and reject); got null",
      ),
    );
    await assert.rejects(
      answerApproval(first.state, { agent: wrapped } as never, false),
      /^TypeError: Cannot answer approval: the interruption has no rawItem \(the model's tool call\); got \(undefined\)/,
    );
    // Nothing was answered: the interruption is still pending, and can be answered.
    assert.equal(first.state.getInterruptions().length, 1);
    await answerApproval(first.state, first.interruptions[0], false);
  });
});
