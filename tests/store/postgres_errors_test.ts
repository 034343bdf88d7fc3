// Which failures of the PostgreSQL client the store retries: a lost or destroyed connection is,
// a constraint violation or a syntax error is not.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import postgres from "postgres";
import { isTransient } from "../../store/postgres/_pg_errors.ts";
import { adminSql, assertPostgresAnswers, PG_URL } from "./postgres_fixture.ts";

function coded(code: string): Error {
  return Object.assign(new Error(`write ${code}`), { code });
}

describe("PostgreSQL error classification", () => {
  it("isTransient() retries lost, destroyed and ended connections and rolled-back transactions", () => {
    for (
      const code of [
        "CONNECTION_CLOSED",
        "CONNECTION_DESTROYED",
        "CONNECTION_ENDED",
        "ECONNRESET",
        "57P01",
        "40001",
        "40P01",
        "08006",
      ]
    ) {
      assert.equal(isTransient(coded(code)), true, code);
    }
    for (const code of ["23505", "42601", "22P02", "COPY_IN_PROGRESS", "UNDEFINED_VALUE"]) {
      assert.equal(isTransient(coded(code)), false, code);
    }
    assert.equal(isTransient(new Error("no code")), false);
    assert.equal(isTransient(null), false);
  });

  it("a query still running on a pool that is ended fails with CONNECTION_DESTROYED, which isTransient() retries", async () => {
    // What a call sees when the store replaces a pool that left an attempt unanswered (see
    // PostgresStore's #retire): the old pool is ended with a deadline, and queries still on it
    // are destroyed. Such a call must be retried on the new pool, not fail.
    const admin = adminSql(1);
    await assertPostgresAnswers(admin);
    await admin.end({ timeout: 1 });
    const sql = postgres(PG_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    await sql`SELECT 1`;
    const running = sql`SELECT pg_sleep(5)`.then(() => null, (error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await sql.end({ timeout: 0.2 });
    const error = await running;
    assert.equal((error as { code?: string } | null)?.code, "CONNECTION_DESTROYED");
    assert.equal(isTransient(error), true);
  });
});
