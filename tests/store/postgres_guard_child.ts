// A child process of tests/store/postgres_client_guard_test.ts (not a test file). MODE picks what
// is thrown from a timer, where no caller can catch it:
// - defect:   the client's write on a closed socket, while the guard is held: prints SURVIVED
// - other:    any other TypeError while the guard is held: must end the process
// - released: the client's error after the guard was released: must end the process

import process from "node:process";
import { setImmediate } from "node:timers";
import { guardClientDefect } from "../../store/postgres/_client_guard.ts";

function clientDefect(): TypeError {
  const error = new TypeError("Cannot read properties of null (reading 'write')");
  error.stack = `${error.message}\n    at Immediate.nextWrite ` +
    "(file:///app/node_modules/postgres/src/connection.js:255:22)";
  return error;
}

const mode = process.env.MODE;
const release = guardClientDefect();
if (mode === "released") release();
setImmediate(() => {
  throw mode === "other" ? new TypeError("something else broke") : clientDefect();
});
setTimeout(() => {
  process.stdout.write("SURVIVED\n");
  release();
}, 300);
