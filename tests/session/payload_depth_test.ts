// Values nested far too deeply (10 000 levels) in tool arguments, tool results and hook
// payloads end in a typed PayloadTooDeepError at MAX_PAYLOAD_DEPTH, never a stack overflow: the
// agent loop tells the model and goes on, and the session keeps working.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { IModel, Session, Tool } from "../../mod.ts";
import { MAX_PAYLOAD_DEPTH, PayloadTooDeepError } from "../../session/mod.ts";
import { assertDepth } from "../../core/_depth.ts";
import { FunctionEndpoint } from "../../service/mod.ts";

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

const nestedJson = (depth: number) => `${'{"a":'.repeat(depth)}"leaf"${"}".repeat(depth)}`;

/** A model that asks for one tool call with `argumentsJson`, then answers "done". */
function scriptedModel(name: string, argumentsJson: string): IModel {
  let turn = 0;
  const endpoint = new FunctionEndpoint({
    call: () => {
      turn++;
      if (turn === 1) {
        return {
          choices: [{
            index: 0,
            message: {
              role: "assistant",
              content: null,
              tool_calls: [{
                id: "c1",
                type: "function",
                function: { name, arguments: argumentsJson },
              }],
            },
            finish_reason: "tool_calls",
          }],
        };
      }
      return {
        choices: [{
          index: 0,
          message: { role: "assistant", content: "done" },
          finish_reason: "stop",
        }],
      };
    },
  });
  return new IModel({ model: "m", endpoint });
}

describe("payloads nested too deeply", () => {
  it("assertDepth() accepts MAX_PAYLOAD_DEPTH levels, refuses one more, and survives 100 000", () => {
    assert.equal(MAX_PAYLOAD_DEPTH, 256);
    assertDepth(nested(MAX_PAYLOAD_DEPTH), "x");
    assert.throws(() => assertDepth(nested(MAX_PAYLOAD_DEPTH + 1), "x"), PayloadTooDeepError);
    const error = (() => {
      try {
        assertDepth(nested(100_000), `tool "t" arguments`);
      } catch (e) {
        return e;
      }
    })();
    assert.ok(error instanceof PayloadTooDeepError);
    assert.equal(error.message, `Cannot accept tool "t" arguments: nested deeper than 256 levels`);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.throws(() => assertDepth(cycle, "x"), PayloadTooDeepError);
    const shared = { leaf: 1 };
    assertDepth({ a: shared, b: [shared, { c: shared }] }, "x");
  });

  it("operate() gives the model a tool error for 10 000-deep arguments and goes on", async () => {
    const session = new Session();
    let ran = 0;
    const branch = session.newBranch({
      model: scriptedModel("echo", `{"x":${nestedJson(10_000)}}`),
    });
    branch.actions.register(
      new Tool({ name: "echo", inputSchema: z.object({ x: z.unknown() }), execute: () => ++ran }),
    );
    const result = await branch.operate("go");
    assert.equal(ran, 0, "the tool did not run");
    const response = branch.messages.find((m) => m.role === "action_response");
    const output = (response?.content as { output?: { error?: string } }).output;
    assert.match(String(output?.error), /nested deeper than 256 levels/);
    assert.equal(branch.messages.at(-1)?.content, "done");
    assert.ok(result);
  });

  it("operate() gives the model a tool error for a 10 000-deep tool result and goes on", async () => {
    const session = new Session();
    const branch = session.newBranch({ model: scriptedModel("deep", "{}") });
    branch.actions.register(
      new Tool({ name: "deep", inputSchema: z.object({}), execute: () => nested(10_000) }),
    );
    await branch.operate("go");
    const response = branch.messages.find((m) => m.role === "action_response");
    assert.match(JSON.stringify(response?.content), /nested deeper than 256 levels/);
    assert.equal(branch.messages.at(-1)?.content, "done");
  });

  it("act() rejects 10 000-deep arguments and results with a typed error; the branch keeps working", async () => {
    const session = new Session();
    const branch = session.newBranch({});
    branch.actions.register(
      new Tool({
        name: "echo",
        inputSchema: z.object({ x: z.unknown() }),
        execute: (args: { x: unknown }) => args.x,
      }),
    );
    const deepArgs = await branch.act({ function: "echo", arguments: { x: nested(10_000) } })
      .catch((e) => e);
    assert.ok(!(deepArgs instanceof RangeError) || deepArgs instanceof PayloadTooDeepError);
    assert.ok(deepArgs instanceof Error, String(deepArgs));
    assert.match(deepArgs.message, /nested (too deeply|deeper than 256 levels)/);

    // A result built by the tool itself (the arguments were fine).
    branch.actions.register(
      new Tool({ name: "deep", inputSchema: z.object({}), execute: () => nested(10_000) }),
    );
    const deepResult = await branch.act({ function: "deep", arguments: {} }).catch((e) => e);
    assert.ok(deepResult instanceof PayloadTooDeepError, String(deepResult));

    const fine = await branch.act({ function: "echo", arguments: { x: "fine" } });
    assert.equal(fine.output, "fine");
  });
});
