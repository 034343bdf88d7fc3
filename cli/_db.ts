/**
 * Opening an existing session database for the read-only subcommands.
 *
 * @module
 */

import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
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
  const foreign = foreignDatabase(path);
  if (foreign !== null) {
    throw new CliError(
      `Cannot open database ${
        JSON.stringify(path)
      }: it is not a hookscope session database (${foreign})`,
    );
  }
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

/**
 * Why the file is not a hookscope database, read from its SQLite header, or `null` when it may
 * be one. Every hookscope database has a schema version (`user_version`) of 1 or more; a file
 * with a write-ahead log is left to the store, since the header may not show its version yet.
 */
function foreignDatabase(path: string): string | null {
  const header = new Uint8Array(100);
  let read = 0;
  const fd = openSync(path, "r");
  try {
    read = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (read === 0) return "the file is empty";
  const magic = new TextDecoder().decode(header.subarray(0, 15));
  if (read < 100 || magic !== "SQLite format 3") return "not a SQLite file";
  const userVersion = new DataView(header.buffer).getUint32(60);
  if (userVersion === 0 && !existsSync(`${path}-wal`)) {
    return "a SQLite file without hookscope's schema version: another application's file?";
  }
  return null;
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
