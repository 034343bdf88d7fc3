import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { FunctionCalling, Tool } from "../../action/mod.ts";

describe("Tool", () => {
  it("Tool.schema is the OpenAI function schema with zod's JSON Schema and no $schema", () => {
    const tool = new Tool({
      name: "add",
      description: "Adds",
      execute: ({ a, b }) => a + (b ?? 0),
      inputSchema: z.object({ a: z.number(), b: z.number().optional() }),
    });
    const schema = tool.schema as {
      type: string;
      function: { name: string; description: string; parameters: Record<string, unknown> };
    };
    assert.equal(schema.type, "function");
    assert.equal(schema.function.name, "add");
    assert.equal(schema.function.description, "Adds");
    assert.equal("$schema" in schema.function.parameters, false);
    assert.equal(schema.function.parameters.type, "object");
    assert.deepEqual(schema.function.parameters.required, ["a"]);
    assert.deepEqual(Object.keys(schema.function.parameters.properties as object), ["a", "b"]);
    assert.equal(schema.function.parameters.additionalProperties, true);
  });

  it("Tool.schema without requestOptions is an open object", () => {
    function echo(args: Record<string, unknown>) {
      return args;
    }
    const tool = new Tool({ execute: echo });
    assert.equal(tool.name, "echo");
    assert.deepEqual((tool.schema.function as { parameters: unknown }).parameters, {
      type: "object",
      properties: {},
      additionalProperties: true,
    });
  });

  it("Tool.schema with strict forbids additional properties", () => {
    const tool = new Tool({
      name: "t",
      execute: () => 1,
      inputSchema: z.object({ a: z.string() }),
      strict: true,
    });
    const parameters = (tool.schema.function as { parameters: Record<string, unknown> }).parameters;
    assert.equal(parameters.additionalProperties, false);
  });

  it("the deprecated func, requestOptions and strictFuncCall still work, not beside their new names", () => {
    const schema = z.object({ a: z.number() });
    const fn = (args: Record<string, unknown>) => args;
    const old = new Tool({ name: "o", func: fn, requestOptions: schema, strictFuncCall: true });
    assert.equal(old.execute, fn);
    assert.equal(old.func, fn);
    assert.equal(old.inputSchema, schema);
    assert.equal(old.requestOptions, schema);
    assert.equal(old.strict, true);
    assert.equal(old.strictFuncCall, true);
    assert.throws(
      () => new Tool({ name: "o", execute: fn, func: fn }),
      /execute or .* func, not both/,
    );
    assert.throws(
      () => new Tool({ name: "o", execute: fn, inputSchema: schema, requestOptions: schema }),
      /inputSchema or .* requestOptions, not both/,
    );
    assert.throws(
      () => new Tool({ name: "x", func: () => 1, requestOptions: {} as never }),
      { message: 'Cannot create tool "x": requestOptions must be a zod schema' },
    );
  });

  it("new Tool() rejects a missing function, a missing name and a non-zod schema", () => {
    assert.throws(() => new Tool({ execute: undefined as never }), TypeError);
    assert.throws(() => new Tool({}), /execute must be a function/);
    const nameless = Object.defineProperty(() => 1, "name", { value: "" });
    assert.equal(nameless.name, "");
    assert.throws(() => new Tool({ execute: nameless }), {
      name: "TypeError",
      message: "Cannot create tool: a name is required (the function has none)",
    });
    assert.throws(
      () => new Tool({ name: "x", execute: () => 1, inputSchema: {} as never }),
      { message: 'Cannot create tool "x": inputSchema must be a zod schema' },
    );
    assert.throws(
      () => new Tool({ name: "x", execute: () => 1, preprocessor: 5 as never }),
      { message: 'Cannot create tool "x": preprocessor must be a function' },
    );
  });

  it("strict rejects unknown keys; the default keeps them", () => {
    const schema = z.object({ a: z.number() });
    const strict = new Tool({
      name: "s",
      execute: (args) => args,
      inputSchema: schema,
      strict: true,
    });
    const loose = new Tool({ name: "l", execute: (args) => args, inputSchema: schema });
    assert.throws(
      () => new FunctionCalling({ tool: strict, arguments: { a: 1, extra: true } }),
      { name: "ToolArgumentsError" },
    );
    const call = new FunctionCalling({ tool: loose, arguments: { a: 1, extra: true } });
    assert.deepEqual(call.arguments, { a: 1, extra: true });
  });

  it("FunctionCalling accepts arbitrary arguments exactly when the schema does", () => {
    const schema = z.object({ n: z.number().int(), tag: z.string().optional() });
    const tool = new Tool({ name: "p", execute: (args) => args, inputSchema: schema });
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const expected = schema.safeParse(value).success &&
          value !== null && typeof value === "object" && !Array.isArray(value) &&
          [Object.prototype, null].includes(Object.getPrototypeOf(value));
        let accepted = true;
        try {
          new FunctionCalling({ tool, arguments: value as Record<string, unknown> });
        } catch (error) {
          assert.equal((error as Error).name, "ToolArgumentsError");
          accepted = false;
        }
        assert.equal(accepted, expected);
      }),
      { numRuns: 300 },
    );
  });

  it("Tool.toJSON() includes the name, strict and the schema, under their leading names", () => {
    const tool = new Tool({ name: "n", execute: () => 1, strict: true });
    const json = tool.toJSON();
    assert.equal(json.name, "n");
    assert.equal(json.strict, true);
    assert.equal("strictFuncCall" in json, false);
    assert.equal((json.schema as { type: string }).type, "function");
    assert.equal(json.kind, "Tool");
    assert.equal("func" in json, false);
  });
});
