// Bringing a schema to the current version when a store opens. Private to the PostgreSQL store.

import { StoreUnavailableError } from "../store_errors.ts";
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from "./_migrations.ts";
import type { Sql } from "./_pool.ts";

const LOCK_CLASS = 0x686b73; // "hks": the advisory lock class of schema migrations

/** Where the schema is, for the migration and its messages. */
export interface MigrateTarget {
  /** The schema name, unquoted. */
  readonly schema: string;
  /** The schema name, quoted for SQL text. */
  readonly q: string;
  /** The redacted URL that messages name. */
  readonly url: string;
}

/**
 * Creates the schema and applies the missing migrations in one transaction, under an advisory
 * lock, so that any number of processes may open a new schema at once (the first one migrates,
 * the others wait and find it done). With `migrate` false the schema must be current already.
 */
export async function migrateSchema(
  sql: Sql,
  target: MigrateTarget,
  migrate: boolean,
): Promise<void> {
  const { schema, q } = target;
  const current = await schemaVersion(sql, q);
  if (current > PG_SCHEMA_VERSION) throw newer(target, current);
  if (current === PG_SCHEMA_VERSION) return;
  if (!migrate) {
    throw new StoreUnavailableError(
      `Cannot open PostgreSQL store ${JSON.stringify(target.url)}: schema "${schema}" ` +
        (current === 0
          ? "does not exist or holds no hookscope tables"
          : `is at version ${current} and needs migrating to version ${PG_SCHEMA_VERSION}`) +
        "; open it once with migrations enabled",
    );
  }
  await sql.begin(async (tx) => {
    // Other processes opening the same schema wait here; the first one migrates.
    await tx`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(${schema}))`;
    const [exists] = await tx`SELECT 1 AS found FROM pg_namespace WHERE nspname = ${schema}`;
    if (exists === undefined) await tx.unsafe(`CREATE SCHEMA ${q}`);
    await tx.unsafe(
      `CREATE TABLE IF NOT EXISTS ${q}.schema_migrations (version integer PRIMARY KEY, ` +
        "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const [{ version }] = await tx.unsafe(
      `SELECT coalesce(max(version), 0)::int AS version FROM ${q}.schema_migrations`,
    );
    if (version > PG_SCHEMA_VERSION) throw newer(target, version);
    for (const migration of PG_MIGRATIONS) {
      if (migration.version <= version) continue;
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

async function schemaVersion(sql: Sql, q: string): Promise<number> {
  const [row] = await sql`SELECT to_regclass(${`${q}.schema_migrations`}) AS found`;
  if (row.found === null) return 0;
  const [{ version }] = await sql.unsafe(
    `SELECT coalesce(max(version), 0)::int AS version FROM ${q}.schema_migrations`,
  );
  return version as number;
}

function newer(target: MigrateTarget, version: number): StoreUnavailableError {
  return new StoreUnavailableError(
    `Cannot open PostgreSQL store ${JSON.stringify(target.url)}: schema "${target.schema}" is at ` +
      `version ${version}, newer than version ${PG_SCHEMA_VERSION} that this hookscope supports`,
  );
}
