// A RequestSchema over a JSON Schema, validated by @cfworker/json-schema (no code generation, so
// it runs where eval is forbidden), plus a structural check that names what is malformed.
//
// `pattern` is matched in linear time by RE2 (re2js), never by a backtracking JS RegExp: a
// server-supplied pattern such as `^(a+)+$` would otherwise freeze the event loop. Each `pattern`
// is moved into a `format` keyword whose checker is the compiled RE2 pattern (registered on the
// validator's shared format table under a private key); `patternProperties` is refused, because
// the validator matches its keys with a JS RegExp that cannot be replaced.
import { format, Validator } from "@cfworker/json-schema";
import { RE2JS } from "re2js";
import type { RequestSchema } from "./tool.ts";
import { isRecord } from "../core/_util.ts";

const TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions"] as const;
const SCHEMA_VALUES = [
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
] as const;
const SCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"] as const;
const MAX_DEPTH = 64;

/** The first structural problem of a JSON Schema, as `path: what`, or `null`. */
export function findSchemaProblem(schema: unknown, path = "#", depth = 0): string | null {
  if (typeof schema === "boolean") return null;
  if (!isRecord(schema)) return `${path}: a schema must be an object or a boolean`;
  if (depth > MAX_DEPTH) return `${path}: nested deeper than ${MAX_DEPTH} levels`;
  const type = schema.type;
  if (type !== undefined) {
    const list = Array.isArray(type) ? type : [type];
    for (const t of list) {
      if (typeof t !== "string" || !TYPES.has(t)) {
        return `${path}/type: ${JSON.stringify(t)} is not a JSON Schema type`;
      }
    }
  }
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required) || schema.required.some((r) => typeof r !== "string")) {
      return `${path}/required: must be an array of property names`;
    }
  }
  if (schema.enum !== undefined && !Array.isArray(schema.enum)) {
    return `${path}/enum: must be an array`;
  }
  if (schema.$ref !== undefined && typeof schema.$ref !== "string") {
    return `${path}/$ref: must be a string`;
  }
  if (schema.pattern !== undefined) {
    if (typeof schema.pattern !== "string") return `${path}/pattern: must be a string`;
    const problem = re2Problem(schema.pattern);
    if (problem) return `${path}/pattern: ${problem}`;
  }
  if (schema.patternProperties !== undefined) {
    return `${path}/patternProperties: not supported (patterns are matched in linear time, and ` +
      `property-name patterns cannot be)`;
  }
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (map === undefined) continue;
    if (!isRecord(map)) return `${path}/${key}: must be an object of schemas`;
    for (const [name, sub] of Object.entries(map)) {
      const problem = findSchemaProblem(sub, `${path}/${key}/${name}`, depth + 1);
      if (problem) return problem;
    }
  }
  for (const key of SCHEMA_VALUES) {
    const sub = schema[key];
    if (sub === undefined) continue;
    if (key === "items" && Array.isArray(sub)) {
      for (let i = 0; i < sub.length; i++) {
        const problem = findSchemaProblem(sub[i], `${path}/items/${i}`, depth + 1);
        if (problem) return problem;
      }
      continue;
    }
    const problem = findSchemaProblem(sub, `${path}/${key}`, depth + 1);
    if (problem) return problem;
  }
  for (const key of SCHEMA_LISTS) {
    const list = schema[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return `${path}/${key}: must be an array of schemas`;
    for (let i = 0; i < list.length; i++) {
      const problem = findSchemaProblem(list[i], `${path}/${key}/${i}`, depth + 1);
      if (problem) return problem;
    }
  }
  return null;
}

const FORMAT_PREFIX = "\u0000hookscope-re2:";
const MAX_PATTERN_LENGTH = 4096;

function re2Problem(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return `longer than ${MAX_PATTERN_LENGTH} characters`;
  }
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (error) {
    return `${JSON.stringify(pattern)} is not a pattern the linear-time (RE2) matcher accepts (${
      error instanceof Error ? error.message : String(error)
    })`;
  }
}

function registerPattern(pattern: string): string {
  const key = FORMAT_PREFIX + pattern;
  const table = format as Record<string, (value: string) => boolean>;
  if (!Object.hasOwn(table, key)) {
    const compiled = RE2JS.compile(pattern);
    table[key] = (value: string) => compiled.matcher(value).find();
  }
  return key;
}

// A copy of `schema` whose every `pattern` is a `format` checked by RE2 (a schema that already has
// a `format` gets the pattern's check in an added `allOf` entry).
function withLinearPatterns(schema: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH + 1) return schema;
  if (Array.isArray(schema)) return schema.map((s) => withLinearPatterns(s, depth + 1));
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "pattern" && typeof value === "string") continue;
    if (key === "enum" || key === "const" || key === "default" || key === "examples") {
      out[key] = value;
    } else if (SCHEMA_MAPS.includes(key as never) && isRecord(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, withLinearPatterns(v, depth + 1)]),
      );
    } else {
      out[key] = withLinearPatterns(value, depth + 1);
    }
  }
  if (typeof schema.pattern === "string") {
    const key = registerPattern(schema.pattern);
    if (out.format === undefined) out.format = key;
    else out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { format: key }];
  }
  return out;
}

function pathOf(instanceLocation: string): PropertyKey[] {
  return instanceLocation.replace(/^#\/?/, "").split("/").filter((p) => p !== "").map((p) =>
    decodeURIComponent(p.replace(/~1/g, "/").replace(/~0/g, "~"))
  );
}

/** A validator for `schema` in the shape tools expect (`safeParse` with zod-like issues). */
export function jsonSchemaValidator(
  schema: Record<string, unknown>,
): RequestSchema<Record<string, unknown>> {
  const validator = new Validator(withLinearPatterns(schema) as never, "2020-12", false);
  return {
    safeParse(data: unknown) {
      const result = validator.validate(data);
      if (result.valid) return { success: true, data: data as Record<string, unknown> };
      // The deepest errors say what is wrong; the outer ones only say "does not match".
      const leaves = result.errors.filter((e) =>
        !result.errors.some((o) => o !== e && o.keywordLocation.startsWith(e.keywordLocation + "/"))
      );
      return {
        success: false,
        error: {
          issues: (leaves.length ? leaves : result.errors).map((e) => {
            const pattern = e.keyword === "format" && e.error.includes(FORMAT_PREFIX)
              ? e.error.slice(e.error.indexOf(FORMAT_PREFIX) + FORMAT_PREFIX.length, -2)
              : undefined;
            return pattern === undefined
              ? { path: pathOf(e.instanceLocation), message: e.error, code: e.keyword }
              : {
                path: pathOf(e.instanceLocation),
                message: `String does not match pattern ${JSON.stringify(pattern)}.`,
                code: "pattern",
              };
          }),
        },
      };
    },
  };
}
