/**
 * Opening a session database for the subcommands: a SQLite file path or a `postgres://` URL.
 *
 * @module
 */

import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { SessionStore } from "../store/session_store.ts";
import { SqliteStore } from "../store/sqlite/mod.ts";
import { CliError } from "./_output.ts";

/** Whether a DB argument is a PostgreSQL URL rather than a file path. */
export function isDbUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** A DB argument as the store needs it: a URL unchanged, a path made absolute. */
export function dbTarget(value: string): string {
  return isDbUrl(value) ? value : resolve(value);
}

/** A DB argument for messages: the URL without its password, or the path. */
export function displayDb(target: string): string {
  if (!isDbUrl(target)) return target;
  try {
    const url = new URL(target);
    if (url.password !== "") url.password = "***";
    return url.toString();
  } catch {
    return target;
  }
}

/** The store's refusal of a schema that has no hookscope tables yet (opened without migrating). */
const NO_TABLES = /does not exist or holds no hookscope tables/;

/** A schema without hookscope tables: what to do about it, for a person at a terminal. */
class NewSchemaError extends CliError {}

async function openPostgres(url: string, migrate: boolean): Promise<SessionStore> {
  // Loaded only for a URL, so SQLite-only use never loads the PostgreSQL client.
  const { PostgresStore } = await import("../store/postgres/mod.ts");
  try {
    return await PostgresStore.open(url, { migrate, timeoutMs: 15_000 });
  } catch (error) {
    const message = (error as Error).message;
    if (!migrate && NO_TABLES.test(message)) {
      const schema = new URL(url).searchParams.get("schema") ?? "hookscope";
      throw new NewSchemaError(
        `Cannot open database ${JSON.stringify(displayDb(url))}: schema ${
          JSON.stringify(schema)
        } has no hookscope tables yet (nothing was written to it). 'hookscope tail URL' and ` +
          `'hookscope console URL' create it, as does any process that writes sessions to it; ` +
          `check the ?schema= name if you expected some`,
        { cause: error },
      );
    }
    throw new CliError(
      `Cannot open database ${JSON.stringify(displayDb(url))}: ${message}`,
      { cause: error },
    );
  }
}

/**
 * Opens a PostgreSQL store to follow it: an existing schema as it is, a schema without hookscope
 * tables is created (someone who starts following before the first agent has written anything
 * waits for it). Resolves whether it was created.
 */
export async function openToFollow(
  url: string,
): Promise<{ store: SessionStore; created: boolean }> {
  try {
    return { store: await openPostgres(url, false), created: false };
  } catch (error) {
    if (!(error instanceof NewSchemaError)) throw error;
    return { store: await openPostgres(url, true), created: true };
  }
}

/**
 * Opens an existing session database for reading, with clear errors: a SQLite file read-only, or
 * a PostgreSQL schema that must already hold hookscope tables (nothing is created).
 */
export async function openExistingDb(path: string): Promise<SessionStore> {
  if (isDbUrl(path)) return await openPostgres(path, false);
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
 * Throws when `path` is an existing file (or folder) that is not a hookscope session database;
 * nothing there yet, or an empty file, passes.
 */
function refuseForeign(path: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return; // Nothing there yet: it is created.
  }
  const foreign = isFile ? foreignDatabase(path, true) : "not a file";
  if (foreign !== null) {
    throw new CliError(
      `Cannot open database ${
        JSON.stringify(path)
      }: it is not a hookscope session database (${foreign}); nothing was written to it. Give ` +
        `the path of a hookscope database, or of a file that does not exist yet`,
    );
  }
}

/**
 * Why the file is not a hookscope database, read from its SQLite header, or `null` when it may
 * be one. Every hookscope database has a schema version (`user_version`) of 1 or more; a file
 * with a write-ahead log is left to the store, since the header may not show its version yet.
 * With `newOk` (a database about to be created), an empty file and a SQLite file without any
 * table may be one.
 */
function foreignDatabase(path: string, newOk = false): string | null {
  const header = new Uint8Array(108);
  let read = 0;
  const fd = openSync(path, "r");
  try {
    read = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (read === 0) return newOk ? null : "the file is empty";
  const magic = new TextDecoder().decode(header.subarray(0, 15));
  if (read < 100 || magic !== "SQLite format 3") return "not a SQLite file";
  const view = new DataView(header.buffer);
  const userVersion = view.getUint32(60);
  if (userVersion === 0 && !existsSync(`${path}-wal`)) {
    // A database without a single table or index (page 1, the schema, a leaf with no cells) holds
    // nothing of anyone's: it may be made a hookscope one (another hook process's just-made file).
    if (newOk && read >= 108 && header[100] === 0x0d && view.getUint16(103) === 0) return null;
    return "a SQLite file without hookscope's schema version: another application's file?";
  }
  return null;
}

/**
 * Opens a session database for writing, creating it when absent: a SQLite file, or a PostgreSQL
 * schema (created and migrated). An existing file that is not a hookscope database (another
 * application's SQLite file, any other file) is refused, never given hookscope's tables.
 */
export async function openOrCreateDb(target: string): Promise<SessionStore> {
  if (isDbUrl(target)) return await openPostgres(target, true);
  const folder = dirname(resolve(target));
  if (!existsSync(folder)) {
    throw new CliError(
      `Cannot open database ${JSON.stringify(target)}: its folder ${
        JSON.stringify(folder)
      } does not exist; create it, or give a path in a folder that does`,
    );
  }
  refuseForeign(target);
  try {
    return await SqliteStore.open(target);
  } catch (error) {
    throw new CliError(
      `Cannot open database ${JSON.stringify(target)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * The session database `hook` and `serve` use when given no `--db`: `.hookscope/sessions.db` in
 * `projectDir`. Its folder is made when missing, with a `.gitignore` that keeps the recorded
 * sessions (commands, arguments, answers) out of the project's commits.
 */
export function projectDb(projectDir: string): string {
  const folder = join(resolve(projectDir), ".hookscope");
  if (!existsSync(folder)) {
    mkdirSync(folder, { recursive: true });
    try {
      writeFileSync(
        join(folder, ".gitignore"),
        "# made by hookscope: recorded sessions stay local\n*\n",
        {
          flag: "wx",
        },
      );
    } catch {
      // Another hook process made it first.
    }
  }
  return join(folder, "sessions.db");
}

/** Renders a millisecond timestamp for tables. */
export function formatTime(ms: number | null | undefined): string {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "-";
  return new Date(ms).toISOString().replace("T", " ").replace("Z", "");
}

/**
 * Opens an existing session database for writing (answers, resumed runs), with clear errors: a
 * SQLite file or a `postgres://` URL. The file or schema must exist: a typo must not create an
 * empty database.
 */
export async function openWritableDb(path: string): Promise<SessionStore> {
  if (isDbUrl(path)) {
    // The schema must exist (a typo must not create one); an older one is migrated.
    return await openPostgres(path, false).catch((error) => {
      if (error instanceof CliError && /needs migrating/.test(error.message)) {
        return openPostgres(path, true);
      }
      throw error;
    });
  }
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
