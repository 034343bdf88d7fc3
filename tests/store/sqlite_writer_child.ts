// A writer process of tests/store/sqlite_lock_wait_test.ts (not a test file): writes 400 signals of
// its own session into the SQLite file, 32 in flight, and prints RESULT {failed, firstError}.

import process from "node:process";
import { SqliteStore } from "../../store/sqlite/mod.ts";

const [path, sessionId] = process.argv.slice(-2);
const store = await SqliteStore.open(path);
let failed = 0;
let firstError = "";
let next = 0;
await Promise.all(Array.from({ length: 32 }, async () => {
  while (next < 400) {
    const i = next++;
    await store.insertSessionSignal({ sessionId, kind: "K", opId: "", ts: i, payload: { i } })
      .catch((error: Error) => {
        failed += 1;
        firstError ||= error.message;
      });
  }
}));
await store.close();
process.stdout.write(`RESULT ${JSON.stringify({ failed, firstError })}\n`);
process.exit(0);
