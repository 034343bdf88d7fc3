// The tape engine shared by `tapeEndpoint` and the AI SDK `tapeMiddleware`: the JSONL format,
// redaction, the canonical request and its fingerprint, matching with a line diff, and timing.

import { isAbortSignal } from "../core/_abort.ts";
import { abortable } from "../core/_async.ts";
import { REDACTED, redactSecrets } from "../core/redact.ts";
import {
  TapeExhaustedError,
  TapeFormatError,
  TapeMismatchError,
  TapeUnconsumedError,
} from "./tape_errors.ts";

/** The tape format version this code writes and the newest it reads. */
export const TAPE_VERSION = 1;

/** Reads and writes tape files; the default uses `node:fs/promises` (Deno, Bun, Node). */
export interface TapeFiles {
  /** Reads a whole text file. */
  readText(path: string): Promise<string>;
  /** Replaces a whole text file. */
  writeText(path: string, text: string): Promise<void>;
}

/** The options both tapes share. */
export interface TapeOptions {
  /** The tape file (JSONL). */
  path: string;
  /** `"record"` calls the model and writes the tape; `"replay"` answers from it. */
  mode: "record" | "replay";
  /**
   * `"keep"` (default) stores and compares the messages' text. `"drop"` replaces every value
   * inside each message (OpenAI `messages`, AI SDK `prompt`) by `"[dropped]"`, except `role`,
   * `type`, `id`, `name`, `tool_call_id`, `toolCallId`, `toolName` and `mediaType`; the model,
   * the tools, `tool_choice` and the sampling parameters stay. A replay uses the tape's own
   * setting.
   */
  content?: "keep" | "drop";
  /** Replay streamed chunks at once (`"immediate"`, default) or with the recorded gaps. */
  timing?: "immediate" | "recorded";
  /** More strings to remove from the tape (in any encoding), besides the endpoint's own. */
  secrets?: readonly string[];
  /** File access (default: `node:fs/promises`, loaded on first use). */
  files?: TapeFiles;
}

/** One recorded chunk: its time after the call started, in milliseconds, and the chunk. */
export interface TapeChunk {
  /** Milliseconds after the call started. */
  ms: number;
  /** The chunk or part, redacted. */
  chunk: unknown;
}

/** One line of the tape after the header. */
export interface TapeEntry {
  /** The call's position, from 0. */
  index: number;
  /** The kind of call. */
  call: string;
  /** Lowercase hex SHA-256 of the canonical JSON of `{ call, request }`. */
  fingerprint: string;
  /** The redacted request. */
  request: unknown;
  /** A non-streamed answer. */
  response?: unknown;
  /** A streamed answer. */
  chunks?: TapeChunk[];
  /** How a stream ended. */
  end?: "done" | "error" | "cancelled";
  /** The failure the call ended with. */
  error?: { name: string; message: string };
}

/** A request prepared for the tape. */
export interface PreparedRequest {
  /** The redacted (and, with `content: "drop"`, dropped) request. */
  request: unknown;
  /** Its canonical JSON. */
  canonical: string;
  /** The entry's fingerprint. */
  fingerprint: string;
}

/**
 * Strings shaped like provider API keys and tokens, removed from every string on a tape: `sk-…`,
 * GitHub, Slack, AWS access key ids, Google API keys, bearer tokens, PEM private keys, and the
 * user:password part of a URL.
 */
const KEY_SHAPES: readonly [RegExp, string][] = [
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g, REDACTED],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, REDACTED],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{35}/g, REDACTED],
  [/\b[Bb]earer\s+[A-Za-z0-9._~+/-]{16,}=*/g, REDACTED],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@:]*:[^\s/?#@]*@/gi, `$1${REDACTED}@`],
];

/** Keys whose string values are credentials (token counts such as `max_tokens` are kept). */
const SECRET_KEY = /authorization|api[-_]?key|secret|password|passwd|token(?!s)|cookie|bearer/i;

/** Keys kept when message content is dropped. */
const STRUCTURAL = new Set([
  "role",
  "type",
  "id",
  "name",
  "tool_call_id",
  "toolCallId",
  "toolName",
  "mediaType",
]);

const DROPPED = "[dropped]";

/** The text cleaner of a tape: the endpoint's redaction, `secrets`, then key shapes. */
export function textCleaner(
  secrets: readonly string[],
  endpointRedact?: (text: string) => string,
): (text: string) => string {
  return (text) => {
    let out = endpointRedact ? endpointRedact(text) : text;
    if (secrets.length > 0) out = redactSecrets(out, secrets);
    for (const [shape, by] of KEY_SHAPES) out = out.replace(shape, by);
    return out;
  };
}

/**
 * A plain JSON copy of `value` with every string (keys too) cleaned and the string values of
 * credential-looking keys replaced; functions, `undefined` and signals are left out, `Date`s
 * become ISO strings, errors `{ name, message }`, typed arrays arrays of numbers.
 */
export function cleanValue(
  value: unknown,
  clean: (text: string) => string,
  skip?: ReadonlySet<string>,
): unknown {
  const seen = new Set<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return clean(v);
    if (typeof v === "number") return Number.isFinite(v) ? v : null;
    if (typeof v === "boolean" || v === null) return v;
    if (typeof v === "bigint") return v.toString();
    if (typeof v !== "object" || v === undefined) return undefined;
    if (depth > 64 || seen.has(v)) return "[Circular]";
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
    if (isAbortSignal(v)) return undefined;
    if (v instanceof Error) return { name: clean(v.name), message: clean(v.message) };
    if (ArrayBuffer.isView(v)) {
      return Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    }
    seen.add(v);
    try {
      if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1) ?? null);
      if (v instanceof URL) return clean(v.href);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v)) {
        if (depth === 0 && skip?.has(key)) continue;
        const cleaned = typeof item === "string" && SECRET_KEY.test(key) && !/tokens$/i.test(key)
          ? REDACTED
          : walk(item, depth + 1);
        if (cleaned !== undefined) {
          Object.defineProperty(out, clean(key), {
            value: cleaned,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
      }
      return out;
    } finally {
      seen.delete(v);
    }
  };
  return walk(value, 0);
}

/** `request` with the values inside each message of `request[field]` dropped. */
export function dropContent(request: unknown, field: string): unknown {
  if (request === null || typeof request !== "object" || Array.isArray(request)) return request;
  const messages = (request as Record<string, unknown>)[field];
  if (!Array.isArray(messages)) return request;
  const drop = (v: unknown, key: string | undefined): unknown => {
    if (Array.isArray(v)) return v.map((item) => drop(item, undefined));
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) out[k] = drop(item, k);
      return out;
    }
    return key !== undefined && STRUCTURAL.has(key) ? v : DROPPED;
  };
  return { ...(request as Record<string, unknown>), [field]: messages.map((m) => drop(m, "")) };
}

/** JSON with sorted keys: no spaces (`indent` 0) or pretty. */
export function canonicalJson(value: unknown, indent = 0): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) {
        Object.defineProperty(out, key, {
          value: sort((v as Record<string, unknown>)[key]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value), null, indent) ?? "null";
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The paths at which `a` and `b` differ (at most `max`). */
export function differingFields(a: unknown, b: unknown, max = 20): string[] {
  const out: string[] = [];
  const visit = (x: unknown, y: unknown, path: string): void => {
    if (out.length >= max) return;
    if (Array.isArray(x) && Array.isArray(y)) {
      const n = Math.max(x.length, y.length);
      for (let i = 0; i < n; i++) visit(x[i], y[i], `${path}[${i}]`);
      return;
    }
    const xo = x !== null && typeof x === "object" && !Array.isArray(x);
    const yo = y !== null && typeof y === "object" && !Array.isArray(y);
    if (xo && yo) {
      const keys = [...new Set([...Object.keys(x as object), ...Object.keys(y as object)])].sort();
      for (const key of keys) {
        const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
        visit(
          (x as Record<string, unknown>)[key],
          (y as Record<string, unknown>)[key],
          path === "" ? name : `${path}.${name}`,
        );
      }
      return;
    }
    if (canonicalJson(x) !== canonicalJson(y)) out.push(path === "" ? "(request)" : path);
  };
  visit(a, b, "");
  return out;
}

/** A line diff of two texts with two lines of context: ` ` same, `-` only in a, `+` only in b. */
export function lineDiff(a: string, b: string, maxLines = 200): string {
  const x = a.split("\n");
  const y = b.split("\n");
  let ops: string[];
  if (x.length * y.length > 4_000_000) {
    ops = [...x.map((l) => `-${l}`), ...y.map((l) => `+${l}`)];
  } else {
    // Longest common subsequence, walked from the start.
    const n = x.length;
    const m = y.length;
    const table = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i * (m + 1) + j] = x[i] === y[j]
          ? table[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(table[(i + 1) * (m + 1) + j], table[i * (m + 1) + j + 1]);
      }
    }
    ops = [];
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) {
        ops.push(` ${x[i]}`);
        i++;
        j++;
      } else if (j < m && (i === n || table[i * (m + 1) + j + 1] >= table[(i + 1) * (m + 1) + j])) {
        ops.push(`+${y[j++]}`);
      } else {
        ops.push(`-${x[i++]}`);
      }
    }
  }
  const keep = ops.map((_op, k) =>
    ops.slice(Math.max(0, k - 2), k + 3).some((near) => near[0] !== " ")
  );
  const out: string[] = [];
  let skipped = false;
  for (let k = 0; k < ops.length; k++) {
    if (!keep[k]) {
      if (!skipped) out.push(" …");
      skipped = true;
      continue;
    }
    skipped = false;
    out.push(ops[k]);
  }
  if (out.length > maxLines) {
    return [...out.slice(0, maxLines), `… ${out.length - maxLines} more lines`].join("\n");
  }
  return out.join("\n");
}

/**
 * A stream that passes on a live stream's chunks and records them, with their times since
 * `started`, as tape entry `index`; the entry is committed exactly once, when the stream ends,
 * fails, fails to open or is cancelled (also before its first read). A stream dropped without a
 * cancel is never committed: its index stays a gap.
 * `preparing` is the request the stream answers; `open` is the live stream's reader (a promise of
 * it, or a function called on first read).
 */
export function recordStream<T>(
  tape: Tape,
  index: number,
  started: number,
  preparing: Promise<PreparedRequest>,
  open:
    | Promise<ReadableStreamDefaultReader<T>>
    | (() => Promise<ReadableStreamDefaultReader<T>>),
): ReadableStream<T> {
  const chunks: TapeChunk[] = [];
  let opening = typeof open === "function" ? undefined : open;
  opening?.catch(() => {}); // handled by the first read or by cancel
  let reader: ReadableStreamDefaultReader<T> | undefined;
  let cancelled = false;
  let finished = false;
  const finish = async (rest: Partial<TapeEntry>): Promise<void> => {
    if (finished) return;
    finished = true;
    // A request that could not be prepared is recorded as null (the same failure replays).
    const prepared = await preparing.catch(() => undefined);
    await tape.commit({
      index,
      call: "stream",
      fingerprint: prepared?.fingerprint ?? "",
      request: prepared?.request ?? null,
      chunks,
      ...rest,
    });
  };
  const failed = (error: unknown) =>
    finish({ end: "error", error: errorRecord(error, (v) => tape.clean(v)) });
  return new ReadableStream<T>({
    pull: async (controller) => {
      if (reader === undefined) {
        opening ??= (open as () => Promise<ReadableStreamDefaultReader<T>>)();
        try {
          reader = await opening;
        } catch (error) {
          await failed(error);
          throw error;
        }
        // Cancelled while it was being opened: cancel has waited for it and ended it upstream.
        if (cancelled) return;
      }
      let next: ReadableStreamReadResult<T>;
      try {
        next = await reader.read();
      } catch (error) {
        await failed(error);
        throw error;
      }
      if (next.done) {
        await finish({ end: "done" });
        controller.close();
        return;
      }
      chunks.push({ ms: Date.now() - started, chunk: tape.clean(next.value) });
      controller.enqueue(next.value);
    },
    cancel: async (reason) => {
      cancelled = true;
      try {
        // A stream that is open or being opened is cancelled upstream, even before a read; one
        // opened on demand and never read is never started just to be cancelled.
        if (reader === undefined && opening !== undefined) {
          reader = await opening.catch(() => undefined);
        }
        await reader?.cancel(reason);
      } finally {
        await finish({ end: "cancelled" });
      }
    },
  }, { highWaterMark: 0 });
}

let nodeFiles: TapeFiles | undefined;

async function defaultFiles(): Promise<TapeFiles> {
  if (nodeFiles) return nodeFiles;
  // A computed specifier: bundlers for web runtimes leave it alone (the module is loaded only
  // when a tape without `files` is used), Deno, Bun and Node resolve it at run time.
  const specifier = ["node:fs", "promises"].join("/");
  const fs = await import(specifier) as {
    readFile(path: string, encoding: "utf8"): Promise<string>;
    writeFile(path: string, data: string, encoding: "utf8"): Promise<void>;
  };
  nodeFiles = {
    readText: (path) => fs.readFile(path, "utf8"),
    writeText: (path, text) => fs.writeFile(path, text, "utf8"),
  };
  return nodeFiles;
}

/** What a tape's owner tells the engine. */
export interface TapeInit {
  /** Which adapter writes the tape (`"endpoint"` or `"ai-sdk"`). */
  source: string;
  /** The top-level request field holding the messages. */
  messagesField: string;
  /** Top-level request fields left out of the tape and the fingerprint. */
  skip?: readonly string[];
  /** The endpoint's own redaction, if it has one. */
  endpointRedact?: (text: string) => string;
}

/** One tape file in record or replay mode. */
export class Tape {
  /** The file. */
  readonly path: string;
  /** The mode. */
  readonly mode: "record" | "replay";
  /** The replay timing. */
  readonly timing: "immediate" | "recorded";
  readonly #source: string;
  readonly #messagesField: string;
  readonly #skip: ReadonlySet<string>;
  readonly #files: TapeFiles | undefined;
  #content: "keep" | "drop";
  #clean: (text: string) => string;
  #claimed = 0;
  // record
  #entries: TapeEntry[] = [];
  #writing: Promise<void> = Promise.resolve();
  #writeError: unknown;
  // replay
  #loaded: Promise<TapeEntry[]> | undefined;
  #size = -1;

  /** Checks the options; a bad one throws a `TypeError`. */
  constructor(options: TapeOptions, init: TapeInit) {
    if (options === null || typeof options !== "object") {
      throw new TypeError(`Cannot create tape: options must be an object`);
    }
    if (typeof options.path !== "string" || options.path === "") {
      throw new TypeError(`Cannot create tape: path must be a non-empty string`);
    }
    if (options.mode !== "record" && options.mode !== "replay") {
      throw new TypeError(
        `Cannot create tape: mode must be "record" or "replay"; got ${
          JSON.stringify(String(options.mode))
        }`,
      );
    }
    const content = options.content ?? "keep";
    if (content !== "keep" && content !== "drop") {
      throw new TypeError(`Cannot create tape: content must be "keep" or "drop"`);
    }
    const timing = options.timing ?? "immediate";
    if (timing !== "immediate" && timing !== "recorded") {
      throw new TypeError(`Cannot create tape: timing must be "immediate" or "recorded"`);
    }
    const secrets = options.secrets ?? [];
    if (!Array.isArray(secrets) || secrets.some((s) => typeof s !== "string")) {
      throw new TypeError(`Cannot create tape: secrets must be an array of strings`);
    }
    if (
      options.files !== undefined &&
      (options.files === null || typeof options.files.readText !== "function" ||
        typeof options.files.writeText !== "function")
    ) {
      throw new TypeError(`Cannot create tape: files must have readText and writeText`);
    }
    this.path = options.path;
    this.mode = options.mode;
    this.timing = timing;
    this.#content = content;
    this.#source = init.source;
    this.#messagesField = init.messagesField;
    this.#skip = new Set(init.skip ?? []);
    this.#files = options.files;
    this.#clean = textCleaner(secrets, init.endpointRedact);
  }

  /** The next call's position; taken synchronously so concurrent calls keep their order. */
  claim(): number {
    return this.#claimed++;
  }

  /** How many calls were made so far. */
  get calls(): number {
    return this.#claimed;
  }

  /** The redacted copy of an answer or chunk. */
  clean(value: unknown): unknown {
    return cleanValue(value, this.#clean);
  }

  /** Redacts, drops and fingerprints a request. */
  async prepare(call: string, raw: unknown): Promise<PreparedRequest> {
    if (this.mode === "replay") await this.#load();
    let request = cleanValue(raw, this.#clean, this.#skip);
    if (this.#content === "drop") request = dropContent(request, this.#messagesField);
    const canonical = canonicalJson(request);
    const fingerprint = await sha256Hex(canonicalJson({ call, request }));
    return { request, canonical, fingerprint };
  }

  /**
   * {@linkcode Tape.prepare} for claimed entry `index`, ended early by `signal`. When recording, a
   * request that fails to prepare or an abort before the call is committed as the entry's error
   * (the tape keeps no gap; a failed write shows in `writeError`), and the failure is thrown.
   */
  async prepareFor(
    index: number,
    call: string,
    raw: unknown,
    signal?: AbortSignal,
  ): Promise<PreparedRequest> {
    const preparing = this.prepare(call, raw);
    try {
      return await abortable(preparing, signal);
    } catch (error) {
      if (this.mode === "record") {
        const prepared = await preparing.catch(() => undefined);
        await this.commit({
          index,
          call,
          fingerprint: prepared?.fingerprint ?? "",
          request: prepared?.request ?? null,
          error: errorRecord(error, (v) => this.clean(v)),
        }).catch(() => {});
      }
      throw error;
    }
  }

  /** Stores a finished entry and rewrites the file; resolves once it is written. */
  commit(entry: TapeEntry): Promise<void> {
    this.#entries.push(entry);
    return this.flush();
  }

  /** Waits for every write; in record mode writes the tape now (the header alone if no calls). */
  flush(): Promise<void> {
    if (this.mode === "replay") return Promise.resolve();
    const write = async (): Promise<void> => {
      const files = this.#files ?? await defaultFiles();
      const header = { hookscopeTape: TAPE_VERSION, source: this.#source, content: this.#content };
      const lines = [canonicalJson(header)];
      for (const entry of [...this.#entries].sort((a, b) => a.index - b.index)) {
        lines.push(canonicalJson(entry));
      }
      await files.writeText(this.path, lines.join("\n") + "\n");
    };
    this.#writing = this.#writing.then(write, write).catch((error) => {
      this.#writeError = error;
      throw error;
    });
    return this.#writing;
  }

  /** The entry at `index`, if the request matches it; otherwise a typed error. */
  async match(index: number, call: string, prepared: PreparedRequest): Promise<TapeEntry> {
    const entries = await this.#load();
    const entry = entries[index];
    if (entry === undefined) throw new TapeExhaustedError(this.path, index, prepared.request);
    const expected = canonicalJson(entry.request);
    if (entry.call !== call || expected !== prepared.canonical) {
      const fields = differingFields(entry.request, prepared.request);
      const diff = entry.call !== call
        ? `-call: ${entry.call}\n+call: ${call}`
        : lineDiff(canonicalJson(entry.request, 2), canonicalJson(prepared.request, 2));
      throw new TapeMismatchError({
        path: this.path,
        index,
        call,
        fields: entry.call !== call ? [] : fields,
        expected: entry.request,
        actual: prepared.request,
        diff,
      });
    }
    return entry;
  }

  /** Throws {@linkcode TapeUnconsumedError} unless every entry was replayed. */
  async assertConsumed(): Promise<void> {
    if (this.mode === "record") {
      await this.flush();
      return;
    }
    const entries = await this.#load();
    if (this.#claimed < entries.length) {
      throw new TapeUnconsumedError(this.path, this.#claimed, entries.length);
    }
  }

  /** The number of entries (replay, after loading), or of recorded calls. */
  get size(): number {
    return this.mode === "replay" ? this.#size : this.#entries.length;
  }

  /** The write error of the last failed write, if any. */
  get writeError(): unknown {
    return this.#writeError;
  }

  #load(): Promise<TapeEntry[]> {
    return this.#loaded ??= (async () => {
      const files = this.#files ?? await defaultFiles();
      let text: string;
      try {
        text = await files.readText(this.path);
      } catch (cause) {
        throw new TapeFormatError(this.path, 0, "the file cannot be read", { cause });
      }
      const entries = this.#parse(text);
      this.#size = entries.length;
      return entries;
    })();
  }

  #parse(text: string): TapeEntry[] {
    const lines = text.split("\n");
    const parsed: { line: number; value: unknown }[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === "") continue;
      try {
        parsed.push({ line: i + 1, value: JSON.parse(lines[i]) });
      } catch {
        throw new TapeFormatError(this.path, i + 1, "invalid JSON");
      }
    }
    const head = parsed[0];
    const header = head?.value as Record<string, unknown> | undefined;
    if (header === undefined || header === null || typeof header !== "object") {
      throw new TapeFormatError(this.path, head?.line ?? 0, "no tape header");
    }
    const version = header.hookscopeTape;
    if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
      throw new TapeFormatError(this.path, head.line, "no tape header");
    }
    if (version > TAPE_VERSION) {
      throw new TapeFormatError(
        this.path,
        head.line,
        `format version ${version} is newer than this hookscope reads (${TAPE_VERSION})`,
      );
    }
    if (header.source !== this.#source) {
      throw new TapeFormatError(
        this.path,
        head.line,
        `recorded by ${JSON.stringify(String(header.source))}, not ${JSON.stringify(this.#source)}`,
      );
    }
    if (header.content !== "keep" && header.content !== "drop") {
      throw new TapeFormatError(this.path, head.line, `content must be "keep" or "drop"`);
    }
    this.#content = header.content;
    const entries: TapeEntry[] = [];
    for (const { line, value } of parsed.slice(1)) {
      const entry = value as TapeEntry;
      if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
        throw new TapeFormatError(this.path, line, "an entry must be an object");
      }
      if (entry.index !== entries.length) {
        throw new TapeFormatError(
          this.path,
          line,
          `expected the entry of index ${entries.length}; got ${JSON.stringify(entry.index)}`,
        );
      }
      if (typeof entry.call !== "string" || !("request" in entry)) {
        throw new TapeFormatError(this.path, line, "an entry needs call and request");
      }
      if (entry.chunks !== undefined) {
        if (
          !Array.isArray(entry.chunks) ||
          entry.chunks.some((c) =>
            c === null || typeof c !== "object" || typeof c.ms !== "number" || !("chunk" in c)
          )
        ) {
          throw new TapeFormatError(this.path, line, "chunks must be a list of { ms, chunk }");
        }
      }
      if (
        entry.error !== undefined &&
        (entry.error === null || typeof entry.error.message !== "string")
      ) {
        throw new TapeFormatError(this.path, line, "error must be { name, message }");
      }
      entries.push(entry);
    }
    return entries;
  }
}

/** The `{ name, message }` of a failure, redacted. */
export function errorRecord(error: unknown, clean: (value: unknown) => unknown): {
  name: string;
  message: string;
} {
  const name = error instanceof Error || (error !== null && typeof error === "object")
    ? String((error as { name?: unknown }).name ?? "Error")
    : "Error";
  const message = error instanceof Error ? error.message : String(error);
  return clean({ name, message }) as { name: string; message: string };
}
