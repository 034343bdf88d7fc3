// The guard against the `postgres` client's uncatchable write on a closed socket
// (store/postgres/_client_guard.ts): it swallows exactly that error while held, nothing else,
// and nothing once released. Each case runs in a child process on the runtime running this test.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { runnerArgs } from "./postgres_fixture.ts";
import { isClosedSocketWrite } from "../../store/postgres/_client_guard.ts";

const CHILD = fileURLToPath(new URL("./postgres_guard_child.ts", import.meta.url));

function runChild(mode: string): Promise<{ code: number | null; stdout: string }> {
  const { command, args } = runnerArgs(CHILD);
  const child = spawn(command, args, {
    env: { ...process.env, MODE: mode, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => void (stdout += chunk));
  child.stderr!.resume();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`child ${mode} did not exit within 60 s`));
    }, 60_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout });
    });
  });
}

describe("the postgres client defect guard", () => {
  it("recognizes only the client's write on a closed socket", () => {
    const defect = new TypeError("Cannot read properties of null (reading 'write')");
    defect.stack = `${defect.message}\n    at Immediate.nextWrite ` +
      "(file:///x/node_modules/postgres/src/connection.js:255:22)";
    assert.equal(isClosedSocketWrite(defect), true);
    const bun = new TypeError("null is not an object (evaluating 'socket.write')");
    bun.stack =
      `${bun.message}\n    at nextWrite (/x/node_modules/postgres/src/connection.js:255:15)`;
    assert.equal(isClosedSocketWrite(bun), true);
    const elsewhere = new TypeError(defect.message);
    elsewhere.stack = `${defect.message}\n    at nextWrite (file:///x/src/my_socket.js:1:1)`;
    assert.equal(isClosedSocketWrite(elsewhere), false);
    const plain = new Error(defect.message);
    plain.stack = defect.stack;
    assert.equal(isClosedSocketWrite(plain), false);
    assert.equal(isClosedSocketWrite(undefined), false);
  });

  it("keeps the process alive through the client's error while held", async () => {
    const { code, stdout } = await runChild("defect");
    assert.equal(code, 0);
    assert.match(stdout, /SURVIVED/);
  });

  it("lets any other uncaught error end the process", async () => {
    const { code, stdout } = await runChild("other");
    assert.notEqual(code, 0);
    assert.doesNotMatch(stdout, /SURVIVED/);
  });

  it("guards nothing once released", async () => {
    const { code, stdout } = await runChild("released");
    assert.notEqual(code, 0);
    assert.doesNotMatch(stdout, /SURVIVED/);
  });
});
