// Starts real workerd (the `workerd` npm package) on a folder holding worker.js and config.capnp,
// for the packaged tier (scripts/packaged/run.ts). The same start-up as
// tests/runtimes/hosts/workerd_test.ts: the port comes from --control-fd.

import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A running workerd. */
export interface WorkerdHost {
  /** Its HTTP socket. */
  readonly url: string;
  /** Everything it printed so far. */
  output(): string;
  /** Stops it and waits for it to exit. */
  stop(): Promise<void>;
}

function workerdBinary(): string {
  const require = createRequire(join(ROOT, "package.json"));
  return join(require.resolve("workerd/package.json"), "..", "bin", "workerd");
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Starts workerd on `dir/config.capnp`; rejects with its output if it exits before listening. */
export function startWorkerd(dir: string): Promise<WorkerdHost> {
  const child: ChildProcess = spawn(
    workerdBinary(),
    ["serve", join(dir, "config.capnp"), "--control-fd=3"],
    { stdio: ["ignore", "pipe", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (d: Uint8Array) => (output += new TextDecoder().decode(d)));
  child.stderr!.on("data", (d: Uint8Array) => (output += new TextDecoder().decode(d)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await within(exited, 20_000, "workerd to exit");
  };
  const listening = new Promise<WorkerdHost>((resolve, reject) => {
    let control = "";
    (child.stdio[3] as Readable).on("data", (d: Uint8Array) => {
      control += new TextDecoder().decode(d);
      const match = control.match(/"event":"listen","socket":"http","port":(\d+)/);
      if (match) resolve({ url: `http://127.0.0.1:${match[1]}`, output: () => output, stop });
    });
    void exited.then((code) => reject(new Error(`workerd exited with ${code}:\n${output}`)));
  });
  return within(listening, 60_000, "workerd to listen").catch(async (error) => {
    await stop().catch(() => {});
    throw error;
  });
}
