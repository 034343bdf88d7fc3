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

/** Parses `args` strictly against `flags` (plus `--help`, also spelled `-h`). */
export function parseFlags(
  command: string,
  args: readonly string[],
  flags: Readonly<Record<string, FlagSpec>>,
): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {
    help: { type: "boolean", short: "h" },
  };
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
  lines.push("  -h, --help".padEnd(24) + "show this help");
  return lines.join("\n");
}

/**
 * Checks that exactly the named positionals were given, each a non-empty string, and returns
 * them; anything else is a {@linkcode UsageError} naming the argument (exit code 2).
 */
export function requirePositionals(
  command: string,
  positionals: readonly string[],
  names: readonly string[],
): string[] {
  const hint = `see 'hookscope ${command} --help'`;
  if (positionals.length !== names.length) {
    const expected = names.length === 1
      ? names[0]
      : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
    throw new UsageError(
      `hookscope ${command}: expected ${expected}; got ${positionals.length} argument${
        positionals.length === 1 ? "" : "s"
      }; ${hint}`,
    );
  }
  positionals.forEach((value, i) => {
    if (value.trim().length === 0) {
      throw new UsageError(`hookscope ${command}: ${names[i]} must not be empty; ${hint}`);
    }
  });
  return [...positionals];
}
