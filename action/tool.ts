/**
 * `Tool`: a callable with a zod request schema, an OpenAI-style function schema and per-Tool
 * pre, post and error processors (tool hooks: one context object in, one decision out).
 *
 * @module
 */

// Named imports, not the `z` namespace: bundlers can then leave out what is unused (zod's
// locales alone are ~260 KB minified).
import { toJSONSchema, ZodObject, ZodType } from "zod";
import { Entity, type EntityInit, toJsonSafe, type ToolSource } from "../core/mod.ts";
import type { ToolEffectsChannel } from "./coding/file_change.ts";
import type { ErrorToolHook, PostToolHook, PreToolHook, ToolHookContext } from "./spec.ts";

/** What a tool function receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the caller cancels the invocation. */
  readonly signal: AbortSignal;
  /** The call id, when the caller supplied one (for example `Branch.act`). */
  readonly callId?: string;
  /**
   * Where a staged run's change set is decided, approved and recorded, when the call runs
   * through a session's act path (`Branch.act`, the agent loop); see `ToolEffectsChannel` in
   * `@hookscope/core/coding`. Tools that stage nothing ignore it.
   */
  readonly effects?: ToolEffectsChannel;
}

/**
 * What processors receive: the one context object of every tool hook.
 *
 * @deprecated Use {@linkcode ToolHookContext} (the same object; processors and `AgentSpec`
 * hooks take one context since 0.3).
 */
export type ProcessorContext = ToolHookContext;

/**
 * Runs before the function: a {@linkcode PreToolHook} — it takes one context object and returns
 * a decision (`{ decision: "allow", updatedArgs }` replaces the arguments, `"ask"` asks a
 * person, `"deny"` refuses the call) or nothing.
 */
export type ToolPreprocessor = PreToolHook;

/**
 * Runs after the function: a {@linkcode PostToolHook} — `{ updatedResult }` replaces the result,
 * `{ context }` reaches the model.
 */
export type ToolPostprocessor = PostToolHook;

/**
 * Runs when the invocation fails: an {@linkcode ErrorToolHook} — `{ updatedResult }` recovers with
 * that result; nothing lets the error stand; a throw replaces the error. A denial and an
 * approval that is pending are decisions, not failures: they never reach it.
 */
export type ToolErrorProcessor = ErrorToolHook;

/**
 * The function a tool wraps. Declared as a method type so a `Tool<{ n: number }>` can be used
 * where a `Tool` is expected (argument bivariance; validation guards the runtime shape).
 */
export type ToolFunction<A extends Record<string, unknown> = Record<string, unknown>, R = unknown> =
  { bivariant(args: A, context: ToolContext): R | Promise<R> }["bivariant"];

const LOCAL_SOURCE: ToolSource = Object.freeze({ kind: "local" });

/**
 * The argument schema a tool takes: structurally what it needs of a zod 4 schema. It must be a zod
 * schema (its JSON Schema is generated with `toJSONSchema`), unless the tool is given its JSON
 * Schema as `parameters`; then any validator with this `safeParse` shape will do.
 */
export interface RequestSchema<A = unknown> {
  /** Validates without throwing. */
  safeParse(data: unknown): { success: boolean; data?: A; error?: unknown };
}

/** Options of {@linkcode Tool}. */
export interface ToolInit<A extends Record<string, unknown> = Record<string, unknown>, R = unknown>
  extends EntityInit {
  /** The function to run (required; `func` is its deprecated spelling). */
  execute?: ToolFunction<A, R>;
  /** @deprecated Use `execute` (same meaning; give one of the two). */
  func?: ToolFunction<A, R>;
  /** The tool name; defaults to the function's name. */
  name?: string;
  /** What the tool does, for the model. */
  description?: string;
  /** The zod schema of the arguments; its JSON Schema is the function's `parameters`. */
  inputSchema?: RequestSchema<A>;
  /** @deprecated Use `inputSchema` (same meaning; give one of the two). */
  requestOptions?: RequestSchema<A>;
  /** Reject unknown argument keys (a strict object) instead of keeping them. */
  strict?: boolean;
  /** @deprecated Use `strict` (same meaning; give one of the two). */
  strictFuncCall?: boolean;
  /**
   * The arguments' JSON Schema, for tools whose schema comes from elsewhere (an MCP server, an AI
   * SDK tool). It becomes the function's `parameters`; `inputSchema` may then be any
   * {@linkcode RequestSchema} (a validator for that JSON Schema) instead of a zod schema.
   */
  parameters?: Record<string, unknown>;
  /** Where the tool comes from; `{ kind: "local" }` by default. Hook payloads carry it. */
  source?: ToolSource;
  /**
   * Runs before the function: `(context) => decision` (see {@linkcode ToolPreprocessor}). The
   * old `(args, options, context) => args` shape is refused.
   */
  preprocessor?: ToolPreprocessor | null;
  /** Runs after the function: `(context) => { updatedResult?, context? }`. */
  postprocessor?: ToolPostprocessor | null;
  /** Runs on an invocation failure: `(context) => { updatedResult?, context? }`. */
  errorProcessor?: ToolErrorProcessor | null;
}

const OPEN_PARAMETERS = Object.freeze({
  type: "object",
  properties: {},
  additionalProperties: true,
});

/**
 * A tool: a function, its argument schema and its processors. Construction checks the shape of
 * the options (a `TypeError` otherwise); invoking goes through `FunctionCalling` or an
 * `ActionManager`.
 *
 * @example A tool with a schema
 * ```ts
 * import { Tool } from "@hookscope/core/action";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const add = new Tool({
 *   name: "add",
 *   description: "Adds two numbers",
 *   execute: ({ a, b }) => a + b,
 *   inputSchema: z.object({ a: z.number(), b: z.number() }),
 * });
 * const fn = add.schema.function as { name: string; parameters: { required: string[] } };
 * assert.equal(fn.name, "add");
 * assert.deepEqual(fn.parameters.required, ["a", "b"]);
 * ```
 */
export class Tool<A extends Record<string, unknown> = Record<string, unknown>, R = unknown>
  extends Entity {
  /** The function the tool runs. */
  readonly execute: ToolFunction<A, R>;
  /** The tool name (the function name in the schema). */
  readonly name: string;
  /** The description given to the model (may be empty). */
  readonly description: string;
  /** The zod schema of the arguments, if any. */
  readonly inputSchema: RequestSchema<A> | null;
  /** Whether unknown argument keys are rejected. */
  readonly strict: boolean;
  /** Runs before the function. */
  readonly preprocessor: ToolPreprocessor | null;
  /** Runs after the function. */
  readonly postprocessor: ToolPostprocessor | null;
  /** Runs on an invocation failure. */
  readonly errorProcessor: ToolErrorProcessor | null;
  /** Where the tool comes from (`{ kind: "local" }` unless an adapter says otherwise). */
  readonly source: ToolSource;
  #schema: Record<string, unknown> | null = null;
  #parameters: Record<string, unknown> | null;
  #validator: RequestSchema | null;

  /** Makes a tool; see {@linkcode ToolInit}. */
  constructor(init: ToolInit<A, R>) {
    if (init === null || typeof init !== "object") {
      throw new TypeError("Cannot create tool: options must be an object");
    }
    for (const [now, before] of SPELLINGS) {
      if (init[now] !== undefined && init[before] !== undefined) {
        throw new TypeError(
          `Cannot create tool: give ${now} or its deprecated spelling ${before}, not both`,
        );
      }
    }
    const execute = init.execute ?? init.func;
    if (typeof execute !== "function") {
      throw new TypeError("Cannot create tool: execute must be a function");
    }
    const inputSchema = init.inputSchema ?? init.requestOptions;
    const schemaKey = init.inputSchema !== undefined ? "inputSchema" : "requestOptions";
    const name = init.name ?? execute.name;
    if (typeof name !== "string" || name === "") {
      throw new TypeError("Cannot create tool: a name is required (the function has none)");
    }
    for (const key of ["preprocessor", "postprocessor", "errorProcessor"] as const) {
      const value = init[key];
      if (value != null && typeof value !== "function") {
        throw new TypeError(
          `Cannot create tool ${JSON.stringify(name)}: ${key} must be a function`,
        );
      }
      // The shape before 0.3 took (value, options, context) or (error, args, context); a
      // processor now takes one context object, so a second parameter would never be given.
      if (typeof value === "function" && value.length > 1) {
        throw new TypeError(
          `Cannot create tool ${
            JSON.stringify(name)
          }: ${key} declares ${value.length} parameters; a processor takes one context object and returns a decision since 0.3 ((context) => ${
            key === "preprocessor" ? '{ decision: "allow", updatedArgs }' : "{ updatedResult }"
          }; read the arguments from context.args${
            key === "preprocessor"
              ? ""
              : key === "postprocessor"
              ? ", the result from context.result"
              : ", the error from context.error"
          })`,
        );
      }
    }
    for (const key of ["preprocessorOptions", "postprocessorOptions"] as const) {
      if ((init as Record<string, unknown>)[key] !== undefined) {
        throw new TypeError(
          `Cannot create tool ${
            JSON.stringify(name)
          }: ${key} was removed in 0.3; a processor takes one context object, so close over its options instead`,
        );
      }
    }
    const parameters = init.parameters;
    if (parameters !== undefined) {
      if (
        parameters === null || typeof parameters !== "object" || Array.isArray(parameters) ||
        parameters.type !== "object"
      ) {
        throw new TypeError(
          `Cannot create tool ${
            JSON.stringify(name)
          }: parameters must be a JSON Schema object with type "object"`,
        );
      }
    }
    const source = init.source ?? LOCAL_SOURCE;
    if (source === null || typeof source !== "object" || typeof source.kind !== "string") {
      throw new TypeError(
        `Cannot create tool ${JSON.stringify(name)}: source must be an object with a string kind`,
      );
    }
    if (
      inputSchema != null && parameters !== undefined &&
      typeof (inputSchema as { safeParse?: unknown }).safeParse !== "function"
    ) {
      throw new TypeError(
        `Cannot create tool ${JSON.stringify(name)}: ${schemaKey} must have a safeParse method`,
      );
    }
    if (
      inputSchema != null && parameters === undefined &&
      !(inputSchema instanceof ZodType)
    ) {
      throw new TypeError(
        `Cannot create tool ${JSON.stringify(name)}: ${schemaKey} must be a zod schema`,
      );
    }
    super(init);
    this.execute = execute;
    this.name = name;
    this.description = init.description ?? "";
    this.inputSchema = inputSchema ?? null;
    this.strict = init.strict ?? init.strictFuncCall ?? false;
    this.preprocessor = init.preprocessor ?? null;
    this.postprocessor = init.postprocessor ?? null;
    this.errorProcessor = init.errorProcessor ?? null;
    this.source = source === LOCAL_SOURCE ? source : Object.freeze({ ...source });
    this.#parameters = parameters === undefined ? null : structuredClone(parameters);
    this.#validator = parameters === undefined
      ? buildValidator((inputSchema ?? null) as ZodType | null, this.strict)
      : inputSchema ?? null;
  }

  /** @deprecated Use `execute` (the same function). */
  get func(): ToolFunction<A, R> {
    return this.execute;
  }

  /** @deprecated Use `inputSchema` (the same schema). */
  get requestOptions(): RequestSchema<A> | null {
    return this.inputSchema;
  }

  /** @deprecated Use `strict` (the same flag). */
  get strictFuncCall(): boolean {
    return this.strict;
  }

  /**
   * The OpenAI-style function schema `{ type: "function", function: { name, description,
   * parameters } }`; `parameters` is the JSON Schema of `inputSchema` (without `$schema`), or
   * an open object schema without one.
   */
  get schema(): Record<string, unknown> {
    if (this.#schema) return this.#schema;
    let parameters: Record<string, unknown> = { ...OPEN_PARAMETERS, properties: {} };
    if (this.#parameters) {
      parameters = this.#parameters;
    } else if (this.inputSchema) {
      const json = toJSONSchema(this.#validator as ZodType, {
        unrepresentable: "any",
        io: "input",
      }) as Record<string, unknown>;
      delete json.$schema;
      const extra = json.additionalProperties;
      if (extra && typeof extra === "object" && Object.keys(extra).length === 0) {
        json.additionalProperties = true;
      }
      parameters = json;
    }
    const fn: Record<string, unknown> = { name: this.name, parameters };
    if (this.description) fn.description = this.description;
    this.#schema = { type: "function", function: fn };
    return this.#schema;
  }

  /** The JSON Schema given as `parameters`, when the tool was made with one. */
  get parameters(): Record<string, unknown> | undefined {
    return this.#parameters ?? undefined;
  }

  /**
   * The zod schema arguments are validated with (`inputSchema`, made strict or loose when it
   * is an object schema), or `null` when the tool has none.
   */
  get validator(): RequestSchema | null {
    return this.#validator;
  }

  /** JSON-safe form: `kind`, `id`, `createdAt`, `metadata`, `name`, `description`, `strict`, `schema`. */
  override toJSON(): Record<string, unknown> {
    return {
      kind: this.constructor.name,
      id: this.id,
      createdAt: this.createdAt,
      metadata: toJsonSafe(this.metadata),
      name: this.name,
      description: this.description,
      strict: this.strict,
      schema: this.schema,
    };
  }
}

/** The leading `ToolInit` keys and their deprecated spellings. */
const SPELLINGS = [
  ["execute", "func"],
  ["inputSchema", "requestOptions"],
  ["strict", "strictFuncCall"],
] as const;

function buildValidator(schema: ZodType | null, strict: boolean): ZodType | null {
  if (!schema) return null;
  if (schema instanceof ZodObject) return strict ? schema.strict() : schema.loose();
  return schema;
}
