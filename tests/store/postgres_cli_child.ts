// Runs the hookscope CLI in its own process (not a test file): the PostgreSQL CLI test sends it
// SIGINT. cli/main.ts runs itself only under `import.meta.main`, which tsx does not set.

import process from "node:process";
import { main } from "../../cli/main.ts";

const code = await main(process.argv.slice(2));
// The exit code, for parents whose child_process reports a SIGINT-ed child as killed by the
// signal even when it handled it and exited (Deno's node:child_process does).
process.stderr.write(`hookscope exit code ${code}\n`);
process.exit(code);
