/**
 * Runs one Claude hook: a command through `sh -c` with the event JSON on stdin (killed with its
 * whole process group at its deadline or on abort), or an http POST of the same JSON.
 *
 * @module
 */

import { spawn } from "node:child_process";
import process from "node:process";
import { deadlineSignal, MAX_TIMER_MS } from "../core/_async.ts";
import { ClaudeHookError } from "./hook_error.ts";
import type { ClaudeHook } from "./settings.ts";

/** The most a hook may print on stdout or stderr (or answer over http), in bytes. */
export const MAX_HOOK_OUTPUT = 1 << 20;

/** What a hook answered. */
export interface HookAnswer {
  /** The exit code (an http hook that answered 2xx counts as 0). */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where and how hooks run. */
export interface RunContext {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function runCommand(
  command: string,
  input: string,
  context: RunContext,
  ms: number,
): Promise<HookAnswer> {
  if (context.signal?.aborted) {
    return Promise.reject(new ClaudeHookError("timeout", command, "aborted"));
  }
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn("sh", ["-c", command], {
        cwd: context.cwd,
        env: { ...context.env },
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
    } catch (error) {
      reject(new ClaudeHookError("spawn", command, (error as Error)?.message ?? String(error)));
      return;
    }
    const out: Uint8Array[] = [];
    const err: Uint8Array[] = [];
    let size = 0;
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      context.signal?.removeEventListener("abort", onAbort);
      fn();
    };
    const fail = (error: ClaudeHookError) => {
      killGroup(child.pid);
      finish(() => reject(error));
    };
    // A deadline longer than a timer can hold is no deadline (as deadlineSignal, for http hooks):
    // setTimeout would fire it at once. Configurations are refused above it; this is the backstop.
    const timer = ms <= MAX_TIMER_MS
      ? setTimeout(
        () => fail(new ClaudeHookError("timeout", command, `timed out after ${ms} ms`)),
        ms,
      )
      : undefined;
    const onAbort = () => fail(new ClaudeHookError("timeout", command, "aborted"));
    context.signal?.addEventListener("abort", onAbort, { once: true });
    const collect = (into: Uint8Array[]) => (chunk: Uint8Array) => {
      size += chunk.length;
      if (size > MAX_HOOK_OUTPUT) {
        fail(new ClaudeHookError("output", command, `printed more than ${MAX_HOOK_OUTPUT} bytes`));
        return;
      }
      into.push(chunk);
    };
    child.stdout.on("data", collect(out));
    child.stderr.on("data", collect(err));
    child.stdin.on("error", () => {}); // a hook that does not read its stdin
    child.on("error", (error) => fail(new ClaudeHookError("spawn", command, error.message)));
    child.on("close", (code, signal) => {
      const decoder = new TextDecoder();
      const text = (parts: Uint8Array[]) => decoder.decode(concat(parts));
      if (code === null) {
        finish(() => reject(new ClaudeHookError("exit", command, `killed by ${signal}`)));
        return;
      }
      finish(() => resolve({ code, stdout: text(out), stderr: text(err) }));
    });
    child.stdin.end(input);
  });
}

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const all = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}

function substitute(
  value: string,
  allowed: readonly string[],
  env: Readonly<Record<string, string>>,
): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, a, b) => {
      const name = a ?? b;
      return allowed.includes(name) ? env[name] ?? "" : whole;
    },
  );
}

async function runHttp(
  url: string,
  headers: Readonly<Record<string, string>>,
  allowed: readonly string[],
  input: string,
  context: RunContext,
  ms: number,
): Promise<HookAnswer> {
  const call = deadlineSignal(ms, context.signal);
  try {
    const sent: Record<string, string> = { "content-type": "application/json" };
    for (const [name, value] of Object.entries(headers)) {
      sent[name] = substitute(value, allowed, context.env);
    }
    const response = await fetch(url, {
      method: "POST",
      headers: sent,
      body: input,
      signal: call.signal,
    });
    const reader = response.body?.getReader();
    const parts: Uint8Array[] = [];
    let size = 0;
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_HOOK_OUTPUT) {
        await reader.cancel();
        throw new ClaudeHookError("output", url, `answered more than ${MAX_HOOK_OUTPUT} bytes`);
      }
      parts.push(value);
    }
    const body = new TextDecoder().decode(concat(parts));
    if (!response.ok) throw new ClaudeHookError("http", url, `answered HTTP ${response.status}`);
    return { code: 0, stdout: body, stderr: "" };
  } catch (error) {
    if (error instanceof ClaudeHookError) throw error;
    if (call.signal.aborted) {
      throw new ClaudeHookError(
        "timeout",
        url,
        context.signal?.aborted ? "aborted" : `timed out after ${ms} ms`,
      );
    }
    throw new ClaudeHookError("http", url, (error as Error)?.message ?? String(error));
  } finally {
    call.done();
  }
}

/** Runs a hook with `input` (the event JSON). */
export function runHook(hook: ClaudeHook, input: string, context: RunContext): Promise<HookAnswer> {
  const ms = hook.timeout === undefined ? context.timeoutMs : Math.round(hook.timeout * 1000);
  return hook.type === "command"
    ? runCommand(hook.command, input, context, ms)
    : runHttp(hook.url, hook.headers ?? {}, hook.allowedEnvVars ?? [], input, context, ms);
}
