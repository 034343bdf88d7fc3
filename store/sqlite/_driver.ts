// Loads the runtime's SQLite module behind one small synchronous interface:
// node:sqlite (DatabaseSync) in Deno and Node >= 22.5, bun:sqlite in Bun.

import { StoreUnavailableError } from "../store_errors.ts";

/** A value SQLite takes or returns. */
export type SqlValue = string | number | null;

/** A row as SQLite returns it. */
export type SqlRow = Record<string, SqlValue>;

/** The synchronous connection the store drives. */
export interface SqlDriver {
  /** Runs statements without parameters or results. */
  exec(sql: string): void;
  /** Runs one statement with parameters. */
  run(sql: string, params?: readonly SqlValue[]): void;
  /** All rows of a query. */
  all(sql: string, params?: readonly SqlValue[]): SqlRow[];
  /** The first row of a query, or `undefined`. */
  get(sql: string, params?: readonly SqlValue[]): SqlRow | undefined;
  /** Closes the connection. */
  close(): void;
}

interface NodeStatement {
  run(...params: SqlValue[]): unknown;
  all(...params: SqlValue[]): SqlRow[];
  get(...params: SqlValue[]): SqlRow | undefined;
}
interface NodeDatabase {
  exec(sql: string): void;
  prepare(sql: string): NodeStatement;
  close(): void;
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => NodeDatabase;
}

interface BunStatement {
  run(...params: SqlValue[]): unknown;
  all(...params: SqlValue[]): SqlRow[];
  get(...params: SqlValue[]): SqlRow | null;
}
interface BunDatabase {
  exec(sql: string): unknown;
  query(sql: string): BunStatement;
  close(): void;
}
interface BunSqliteModule {
  Database: new (
    path: string,
    options?: { readonly?: boolean; create?: boolean; readwrite?: boolean; strict?: boolean },
  ) => BunDatabase;
}

// Specifiers built at run time, so bundlers and type checkers never try to resolve them statically
// (Node and Deno never load bun:sqlite; Node 20 never fails at module load for node:sqlite).
const BUN_SQLITE = ["bun", "sqlite"].join(":");
const NODE_SQLITE = ["node", "sqlite"].join(":");

/** The Node version the store needs, stated in errors. */
export const NODE_SQLITE_VERSION = "22.5";

function runtimeDescription(): string {
  const g = globalThis as {
    Deno?: { version?: { deno?: string } };
    process?: { version?: string };
  };
  if (g.Deno?.version?.deno) return `Deno ${g.Deno.version.deno}`;
  if (g.process?.version) return `Node ${g.process.version}`;
  return "this runtime";
}

/** Opens a connection with the runtime's SQLite module. */
export async function openDriver(path: string, readOnly: boolean): Promise<SqlDriver> {
  if ((globalThis as { Bun?: unknown }).Bun !== undefined) {
    const mod = (await import(BUN_SQLITE)) as BunSqliteModule;
    const db = readOnly
      ? new mod.Database(path, { readonly: true })
      : new mod.Database(path, { create: true, readwrite: true });
    const cache = new Map<string, BunStatement>();
    const statement = (sql: string): BunStatement => {
      let found = cache.get(sql);
      if (found === undefined) {
        found = db.query(sql);
        cache.set(sql, found);
      }
      return found;
    };
    return {
      exec: (sql) => {
        db.exec(sql);
      },
      run: (sql, params = []) => {
        statement(sql).run(...params);
      },
      all: (sql, params = []) => statement(sql).all(...params),
      get: (sql, params = []) => statement(sql).get(...params) ?? undefined,
      close: () => db.close(),
    };
  }
  let mod: NodeSqliteModule;
  try {
    mod = (await import(NODE_SQLITE)) as NodeSqliteModule;
  } catch (cause) {
    throw new StoreUnavailableError(
      `Cannot open SQLite store: node:sqlite is not available in ${runtimeDescription()}; ` +
        `it needs Node >= ${NODE_SQLITE_VERSION} (with --experimental-sqlite before Node 22.13), ` +
        `Deno >= 2.2 or Bun`,
      { cause },
    );
  }
  const db = readOnly ? new mod.DatabaseSync(path, { readOnly: true }) : new mod.DatabaseSync(path);
  const cache = new Map<string, NodeStatement>();
  const statement = (sql: string): NodeStatement => {
    let found = cache.get(sql);
    if (found === undefined) {
      found = db.prepare(sql);
      cache.set(sql, found);
    }
    return found;
  };
  return {
    exec: (sql) => db.exec(sql),
    run: (sql, params = []) => {
      statement(sql).run(...params);
    },
    all: (sql, params = []) => statement(sql).all(...params),
    get: (sql, params = []) => statement(sql).get(...params),
    close: () => db.close(),
  };
}
