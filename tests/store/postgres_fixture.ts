// Shared by the PostgreSQL tests and the store benchmark: where the server is, fresh schemas that
// are dropped afterwards, and a clear failure when PostgreSQL does not answer (CI starts it; a
// missing server must fail the run, never skip it).

import process from "node:process";
import postgres from "postgres";
import { PG_MIGRATIONS } from "../../store/postgres/_migrations.ts";

/** The server the tests use: `HOOKSCOPE_PG_URL`, else the local trust-auth server. */
export const PG_URL: string = process.env.HOOKSCOPE_PG_URL ||
  "postgres://root@127.0.0.1:5432/test";

/** A connection for test setup and inspection (superuser on the CI machine). */
export type AdminSql = postgres.Sql<Record<string, never>>;

/** Opens an admin connection. */
export function adminSql(max = 2): AdminSql {
  return postgres(PG_URL, { max, onnotice: () => {}, connect_timeout: 5 }) as unknown as AdminSql;
}

/** Rejects with a message that says how to start PostgreSQL when it does not answer. */
export async function assertPostgresAnswers(sql: AdminSql): Promise<void> {
  try {
    await sql`SELECT 1`;
  } catch (error) {
    throw new Error(
      `PostgreSQL does not answer at ${PG_URL} (${
        (error as Error).message
      }). Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start, ` +
        "or point HOOKSCOPE_PG_URL at a server (the tests need it and are not skipped)",
      { cause: error },
    );
  }
}

let counter = 0;

/** A schema name no other test run uses. */
export function freshSchema(prefix = "hs_test"): string {
  counter += 1;
  const random = Math.random().toString(36).slice(2, 10);
  return `${prefix}_${process.pid}_${random}_${counter}`;
}

/** Drops the given schemas and everything in them. */
export async function dropSchemas(sql: AdminSql, schemas: Iterable<string>): Promise<void> {
  for (const schema of schemas) {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

/**
 * Creates `schema` as an older version of the store left it: the migrations up to `version`,
 * recorded in `schema_migrations` as the store's migration runner records them.
 */
export async function schemaAtVersion(
  sql: AdminSql,
  schema: string,
  version: number,
): Promise<void> {
  const q = `"${schema}"`;
  await sql.begin(async (tx) => {
    await tx.unsafe(`CREATE SCHEMA ${q}`);
    await tx.unsafe(
      `CREATE TABLE ${q}.schema_migrations (version integer PRIMARY KEY, ` +
        "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    for (const migration of PG_MIGRATIONS.filter((m) => m.version <= version)) {
      for (const statement of migration.statements) {
        await tx.unsafe(statement.replaceAll("{s}", q));
      }
      await tx.unsafe(
        `INSERT INTO ${q}.schema_migrations (version, description) VALUES ($1, $2)`,
        [migration.version, migration.description],
      );
    }
  });
}

/** The runtime's argv prefix that runs a TypeScript file (for worker subprocesses). */
export function runnerArgs(file: string): { command: string; args: string[] } {
  const execPath = process.execPath;
  if ("Deno" in globalThis) {
    return { command: execPath, args: ["run", "-A", file] };
  }
  if ("Bun" in globalThis) return { command: execPath, args: [file] };
  return { command: execPath, args: ["--import", "tsx", file] };
}
