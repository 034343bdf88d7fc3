// A RequestSchema over a JSON Schema, validated by @cfworker/json-schema (no code generation, so
// it runs where eval is forbidden), plus a structural check that names what is malformed.
import { Validator } from "@cfworker/json-schema";
import type { RequestSchema } from "./tool.ts";

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

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The first structural problem of a JSON Schema, as `path: what`, or `null`. */
export function findSchemaProblem(schema: unknown, path = "#", depth = 0): string | null {
  if (typeof schema === "boolean") return null;
  if (!isObject(schema)) return `${path}: a schema must be an object or a boolean`;
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
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (map === undefined) continue;
    if (!isObject(map)) return `${path}/${key}: must be an object of schemas`;
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

function pathOf(instanceLocation: string): PropertyKey[] {
  return instanceLocation.replace(/^#\/?/, "").split("/").filter((p) => p !== "").map((p) =>
    decodeURIComponent(p.replace(/~1/g, "/").replace(/~0/g, "~"))
  );
}

/** A validator for `schema` in the shape tools expect (`safeParse` with zod-like issues). */
export function jsonSchemaValidator(
  schema: Record<string, unknown>,
): RequestSchema<Record<string, unknown>> {
  const validator = new Validator(schema as never, "2020-12", false);
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
          issues: (leaves.length ? leaves : result.errors).map((e) => ({
            path: pathOf(e.instanceLocation),
            message: e.error,
            code: e.keyword,
          })),
        },
      };
    },
  };
}
