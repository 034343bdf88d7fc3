/**
 * Runs an argv subprocess without a shell: optional stdin text, a deadline that kills the
 * process group, each output stream capped in bytes with a truncation marker.
 *
 * @module
 */

import { spawn } from "node:child_process";
import process from "node:process";
import { MAX_TIMER_MS } from "../../core/_async.ts";

/** Options of {@linkcode runProcess}. */
export interface RunProcessOptions {
  /** The program and its arguments; never interpreted by a shell. */
  argv: readonly string[];
  /** Working directory. */
  cwd?: string;
  /** Text written to stdin, which is then closed (stdin is empty otherwise). */
  input?: string;
  /** The deadline in milliseconds. */
  timeoutMs: number;
  /** Cap per output stream in bytes. */
  maxBytes: number;
  /** Aborting it kills the process. */
  signal?: AbortSignal;
  /** The child's environment (default: the parent's). */
  env?: Readonly<Record<string, string>>;
}

/** What {@linkcode runProcess} resolves to. */
export interface RunProcessResult {
  /** Captured stdout (capped, with a marker when cut). */
  stdout: string;
  /** Captured stderr (capped, with a marker when cut). */
  stderr: string;
  /** The exit code, or `null` when killed by a signal or never started. */
  code: number | null;
  /** Whether the deadline killed it. */
  timedOut: boolean;
  /** Whether the caller's signal killed it. */
  aborted: boolean;
  /** The spawn failure (for example a missing program), if any. */
  spawnError: Error | null;
  /** Whether stdout went over the cap (its text then ends with the marker). */
  stdoutTruncated: boolean;
}

/** The marker appended to a stream that went over the cap. */
export function truncationMarker(omitted: number): string {
  return `\n[output truncated: ${omitted} more bytes not shown]`;
}

class Capture {
  #chunks: Uint8Array[] = [];
  #kept = 0;
  #omitted = 0;
  #max: number;
  constructor(max: number) {
    this.#max = max;
  }
  push(chunk: Uint8Array): void {
    const room = this.#max - this.#kept;
    if (room <= 0) {
      this.#omitted += chunk.byteLength;
      return;
    }
    const kept = chunk.byteLength <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(kept);
    this.#kept += kept.byteLength;
    this.#omitted += chunk.byteLength - kept.byteLength;
  }
  get truncated(): boolean {
    return this.#omitted > 0;
  }
  text(): string {
    const all = new Uint8Array(this.#kept);
    let offset = 0;
    for (const chunk of this.#chunks) {
      all.set(chunk, offset);
      offset += chunk.byteLength;
    }
    const text = new TextDecoder().decode(all);
    return this.#omitted ? text + truncationMarker(this.#omitted) : text;
  }
}

/** Runs a program; never rejects (spawn failures are reported in the result). */
export function runProcess(options: RunProcessOptions): Promise<RunProcessResult> {
  return new Promise((resolve) => {
    const stdout = new Capture(options.maxBytes);
    const stderr = new Capture(options.maxBytes);
    let timedOut = false;
    let aborted = false;
    let done = false;
    let spawnError: Error | null = null;
    const detached = process.platform !== "win32";
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(options.argv[0], options.argv.slice(1), {
        cwd: options.cwd,
        ...(options.env ? { env: { ...options.env } } : {}),
        shell: false,
        detached,
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
    } catch (error) {
      resolve({
        stdout: "",
        stderr: "",
        code: null,
        timedOut: false,
        aborted: false,
        spawnError: error instanceof Error ? error : new Error(String(error)),
        stdoutTruncated: false,
      });
      return;
    }
    let forceTimer: ReturnType<typeof setTimeout> | undefined;
    const finish = (code: number | null) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearTimeout(forceTimer);
      options.signal?.removeEventListener("abort", onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
        stdout: stdout.text(),
        stderr: stderr.text(),
        code,
        timedOut,
        aborted,
        spawnError,
        stdoutTruncated: stdout.truncated,
      });
    };
    const kill = () => {
      if (forceTimer !== undefined || done) return;
      if (detached && child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // the group may be gone already, or groups may be unsupported: kill the child itself
        }
      }
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
      // If a grandchild outside the group keeps the pipes open, do not wait for it forever.
      forceTimer = setTimeout(() => finish(null), 2000);
    };
    const onAbort = () => {
      aborted = true;
      kill();
    };
    // A deadline longer than a timer holds (2^31 - 1 ms) would fire at once: it is none.
    const deadline = options.timeoutMs <= MAX_TIMER_MS
      ? setTimeout(() => {
        timedOut = true;
        kill();
      }, options.timeoutMs)
      : undefined;
    if (options.signal) {
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener("abort", onAbort, { once: true });
    }
    child.stdout?.on("data", (chunk: Uint8Array) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Uint8Array) => stderr.push(chunk));
    child.on("error", (error) => {
      spawnError = error;
      finish(null);
    });
    child.on("close", (code) => finish(code));
    child.stdin?.on("error", () => {
      // the program may exit without reading its input
    });
    child.stdin?.end(options.input ?? "");
  });
}
