// Shared parts of the host tests (workerd, edge-runtime, Chromium): bundling the fixture app with
// esbuild, reading its NDJSON responses, and waiting with a deadline.

import { build } from "esbuild";
import { fileURLToPath } from "node:url";

/** The repository root (absolute path). */
export const ROOT: string = fileURLToPath(new URL("../../../", import.meta.url));

/** Bundles `entry` (repo-relative) for a web runtime; returns the JavaScript. */
export async function bundle(
  entry: string,
  options?: { format?: "esm" | "iife"; globalName?: string; minify?: boolean },
): Promise<string> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: options?.format ?? "esm",
    globalName: options?.globalName,
    platform: "browser",
    target: "es2022",
    minify: options?.minify ?? false,
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

/** One parsed NDJSON line of the fixture app's `/stream` route. */
export type StreamLine = { chunk: Record<string, unknown> } | { log: string[] };

/** Reads NDJSON lines from `body`, calling `onLine` for each; resolves with all lines. */
export async function readLines(
  body: ReadableStream<Uint8Array>,
  onLine?: (line: StreamLine, reader: ReadableStreamDefaultReader<Uint8Array>) => boolean | void,
): Promise<StreamLine[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const lines: StreamLine[] = [];
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = JSON.parse(buffer.slice(0, newline)) as StreamLine;
      buffer = buffer.slice(newline + 1);
      lines.push(line);
      if (onLine?.(line, reader) === true) return lines;
    }
  }
  return lines;
}

/** Settles like `promise`, or rejects after `ms` with a message naming `what`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** What every host must show for the streamed route: upper-cased text, usage, done, hook order. */
export const EXPECTED_STREAM: StreamLine[] = [
  { chunk: { type: "text", text: "HEL" } },
  { chunk: { type: "text", text: "LO" } },
  { chunk: { type: "usage", promptTokens: 5, completionTokens: 2, totalTokens: 7 } },
  { chunk: { type: "done", finishReason: "stop" } },
  { log: ["pre_invoke", "chunk:Hel", "chunk:lo", "post_invoke"] },
];

/** What every host must show for the guard route. */
export const EXPECTED_GUARD: Record<string, unknown> = {
  order: ["guard:ls", "after:ls", "guard:rm"],
  allowed: true,
  denied: "denied: rm",
};

/** What every host must show for the entries route: each entry's main class loaded. */
export const EXPECTED_ENTRIES: Record<string, string> = {
  root: "function",
  hooks: "function",
  session: "function",
  service: "function",
  action: "function",
};
