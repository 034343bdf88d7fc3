/**
 * Argument parsing for the `hookscope` command, on `node:util` `parseArgs` (strict: unknown
 * flags are errors).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { UsageError } from "./_output.ts";

/** A flag a subcommand accepts. */
export interface FlagSpec {
  /** `string` takes a value; `boolean` does not. */
  type: "string" | "boolean";
  /** What it does, for `--help`. */
  help: string;
}

/** Parsed flags and positionals. */
export interface ParsedArgs {
  /** Flag values by name. */
  values: Record<string, string | boolean | undefined>;
  /** Positional arguments. */
  positionals: string[];
}

/** Parses `args` strictly against `flags` (plus `--help`). */
export function parseFlags(
  command: string,
  args: readonly string[],
  flags: Readonly<Record<string, FlagSpec>>,
): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean" }> = { help: { type: "boolean" } };
  for (const [name, spec] of Object.entries(flags)) options[name] = { type: spec.type };
  try {
    const parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
    return {
      values: { ...parsed.values } as Record<string, string | boolean | undefined>,
      positionals: parsed.positionals,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message.split(". ")[0] : String(error);
    throw new UsageError(`hookscope ${command}: ${message}; see 'hookscope ${command} --help'`);
  }
}

/** Renders the flag list for `--help`. */
export function flagHelp(flags: Readonly<Record<string, FlagSpec>>): string {
  const lines = Object.entries(flags).map(([name, spec]) =>
    `  --${name}${spec.type === "string" ? " VALUE" : ""}`.padEnd(24) + spec.help
  );
  lines.push("  --help".padEnd(24) + "show this help");
  return lines.join("\n");
}
