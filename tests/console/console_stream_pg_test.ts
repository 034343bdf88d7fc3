// The console's live stream over PostgreSQL: fed by LISTEN/NOTIFY (the store's `subscribe`),
// with a second store on the same schema writing, as another process would.

import { after, before } from "node:test";
import { PostgresStore } from "../../store/postgres/mod.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
} from "../store/postgres_fixture.ts";
import { streamCases } from "./_stream_cases.ts";

const schemas: string[] = [];
before(async () => {
  const admin = adminSql();
  try {
    await assertPostgresAnswers(admin);
  } finally {
    await admin.end();
  }
});
after(async () => {
  const admin = adminSql();
  await dropSchemas(admin, schemas).catch(() => {});
  await admin.end();
});

streamCases("PostgresStore, another connection writes", async () => {
  const schema = freshSchema("hs_console");
  schemas.push(schema);
  const writer = await PostgresStore.open(PG_URL, { schema });
  const reader = await PostgresStore.open(PG_URL, { schema });
  return { reader, writer, feed: "notify" };
});
