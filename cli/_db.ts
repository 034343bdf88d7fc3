/**
 * Opening an existing session database for the read-only subcommands.
 *
 * @module
 */

import { statSync } from "node:fs";
import { SqliteStore } from "../store/sqlite/mod.ts";
import { CliError } from "./_output.ts";

/** Opens an existing SQLite session database read-only, with clear errors. */
export async function openExistingDb(path: string): Promise<SqliteStore> {
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new CliError(`Cannot open database: no file at ${JSON.stringify(path)}`);
  }
  if (!isFile) throw new CliError(`Cannot open database: ${JSON.stringify(path)} is not a file`);
  try {
    return await SqliteStore.open(path, { readOnly: true });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CliError(
      `Cannot open database ${
        JSON.stringify(path)
      }: it is not a hookscope session database (${reason})`,
      { cause: error },
    );
  }
}

/** Renders a millisecond timestamp for tables. */
export function formatTime(ms: number | null | undefined): string {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "-";
  return new Date(ms).toISOString().replace("T", " ").replace("Z", "");
}

/**
 * Opens an existing SQLite session database for writing (answers, resumed runs), with clear
 * errors. The file must exist: a typo must not create an empty database.
 */
export async function openWritableDb(path: string): Promise<SqliteStore> {
  const probe = await openExistingDb(path).catch((error) => {
    // A file of an older schema cannot be opened read-only; writable opening migrates it.
    if (error instanceof CliError && /needs migrating/.test(error.message)) return null;
    throw error;
  });
  await probe?.close();
  try {
    return await SqliteStore.open(path);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CliError(`Cannot open database ${JSON.stringify(path)} for writing: ${reason}`, {
      cause: error,
    });
  }
}
