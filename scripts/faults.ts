// The store fault tests at full size: `deno run -A scripts/faults.ts [trials] [opensPerProcess]`
// (defaults 200 kill -9 trials and 4 × 1 000 concurrent opens; `npm test` runs 20 and 4 × 250).

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";

const root = join(import.meta.dirname ?? ".", "..");
const trials = process.argv[2] ?? "200";
const opens = process.argv[3] ?? "1000";
const deno = join(root, "node_modules", ".bin", "deno");
const result = spawnSync(deno, ["test", "-A", join(root, "tests/store/faults_test.ts")], {
  stdio: "inherit",
  env: { ...process.env, FAULT_TRIALS: trials, FAULT_OPENS: opens },
});
process.exit(result.status ?? 1);
