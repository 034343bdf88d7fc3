/**
 * `redactSecrets`: removes credentials from text, also when they appear encoded.
 *
 * @module
 */

import { toJsonSafe } from "./json_safe.ts";

/** What a redacted credential is replaced by. */
export const REDACTED = "[redacted]";

/**
 * Returns `text` with every occurrence of each secret replaced by `[redacted]`, also when the
 * secret appears:
 * - in another letter case, or split by whitespace or line breaks;
 * - URL-encoded (`%2F`, `%2f`), JSON-escaped (`\/`, `\uXXXX`, `\n`), as HTML entities (`&#47;`,
 *   `&#x2F;`, `&sol;`), or in up to four such layers at once;
 * - base64 or base64url encoded, with or without padding, alone or inside a longer base64 text
 *   (`Bearer <key>`, `user:<key>` of Basic auth), and hex encoded.
 *
 * Given any other value (an object, an array), returns a JSON-safe deep copy in which the values
 * of secret-looking keys (`authorization`, `apiKey`, `api_key`, `secret`, `password`, `token`,
 * `cookie`, …; token *counts* such as `promptTokens` are kept) are `"[redacted]"` and every string
 * is redacted of `secrets` as above. Without `secrets`, a string is returned unchanged.
 *
 * A header value like `Bearer <token>` also redacts the bare token. Surrounding whitespace of a
 * secret is ignored (fetch strips it from header values). Empty secrets are ignored. The result
 * never contains a secret in any of these encodings, and redacting it again changes nothing.
 *
 * @param text The text or value to clean (an error message, a response excerpt, a log entry).
 * @param secrets The credentials to remove (API keys, header values).
 * @returns The text with the secrets replaced, or the cleaned copy of a value.
 *
 * @example Encoded echoes of a key
 * ```ts
 * import { redactSecrets } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const key = "sk-a/b+c=d";
 * const echoed = `got ${key.toUpperCase()}, ${encodeURIComponent(key)} and ${btoa("Bearer " + key)}`;
 * const clean = redactSecrets(echoed, [key]);
 * assert.equal(clean.includes("SK-A/B"), false);
 * assert.equal(clean.includes(encodeURIComponent(key)), false);
 * assert.equal(clean.includes(btoa("Bearer " + key)), false);
 * ```
 *
 * @example A payload with credential keys
 * ```ts
 * import { redactSecrets } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(
 *   redactSecrets({ headers: { Authorization: "Bearer sk-1" }, note: "key sk-abcdef12", totalTokens: 3 }, ["sk-abcdef12"]),
 *   { headers: { Authorization: "[redacted]" }, note: "key [redacted]", totalTokens: 3 },
 * );
 * ```
 */
export function redactSecrets(text: string, secrets: readonly string[]): string;
/**
 * Deeply redacts a value: secret-looking keys get `"[redacted]"`, strings lose `secrets`.
 *
 * @param value Any value; a JSON-safe copy is returned.
 * @param secrets The credentials to remove from every string.
 * @returns The cleaned copy.
 *
 * @example
 * ```ts
 * import { redactSecrets } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(redactSecrets({ apiKey: "x", n: 1 }), { apiKey: "[redacted]", n: 1 });
 * ```
 */
export function redactSecrets(value: unknown, secrets?: readonly string[]): unknown;
export function redactSecrets(value: unknown, secrets: readonly string[] = []): unknown {
  if (typeof value === "string") return redactText(value, secrets);
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactText(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v)) {
        const secret = SECRET_KEY.test(key) && !/tokens$/i.test(key);
        Object.defineProperty(out, redactText(key, secrets), {
          value: secret ? REDACTED : walk(item),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  return walk(toJsonSafe(value));
}

/** How many layers of escaping are undone (JSON in JSON of a URL-encoded key is three). */
const MAX_LAYERS = 4;

const SECRET_KEY = /authorization|api[-_]?key|secret|password|passwd|token(?!s)|cookie|bearer/i;

function redactText(text: string, secrets: readonly string[]): string {
  const patterns = patternsOf(secrets);
  if (patterns.length === 0 || text === "") return text;
  // Up to four decoding layers (e.g. a URL-encoded key inside a JSON string inside JSON), each
  // mapped back to the original text, so a match always replaces the whole encoded span.
  const layers = [decodeLayer(text)];
  while (layers.length < MAX_LAYERS) {
    const next = decodeLayer(layers[layers.length - 1].text);
    if (next.text === layers[layers.length - 1].text) break;
    layers.push(next);
  }
  const spans: [number, number][] = [];
  for (let k = 0; k < layers.length; k++) {
    const decoded = layers[k].text;
    for (const pattern of patterns) {
      let from = 0;
      while (from <= decoded.length - pattern.length) {
        const at = decoded.indexOf(pattern, from);
        if (at < 0) break;
        let start = at;
        let stop = at + pattern.length;
        for (let j = k; j >= 0; j--) {
          start = layers[j].start[start];
          stop = layers[j].end[stop - 1];
        }
        spans.push([start, stop]);
        from = at + 1;
      }
    }
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let cursor = 0;
  let open = -1;
  let close = -1;
  for (const [start, stop] of spans) {
    if (open >= 0 && start <= close) {
      if (stop > close) close = stop;
      continue;
    }
    if (open >= 0) out += text.slice(cursor, open) + REDACTED, cursor = close;
    open = start;
    close = stop;
  }
  if (open >= 0) out += text.slice(cursor, open) + REDACTED, cursor = close;
  return out + text.slice(cursor);
}

/** Text decoded by one layer, with the original span of every decoded character. */
interface Layer {
  text: string;
  /** `start[i]`: the index in the source where decoded character `i` begins. */
  start: number[];
  /** `end[i]`: the index in the source just past decoded character `i`. */
  end: number[];
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  sol: "/",
  bsol: "\\",
  plus: "+",
  equals: "=",
  percnt: "%",
  colon: ":",
  semi: ";",
  comma: ",",
  period: ".",
  num: "#",
  excl: "!",
  quest: "?",
  dollar: "$",
  commat: "@",
  lowbar: "_",
  hyphen: "-",
  dash: "-",
  ast: "*",
  midast: "*",
  lpar: "(",
  rpar: ")",
  lsqb: "[",
  lbrack: "[",
  rsqb: "]",
  rbrack: "]",
  lcub: "{",
  lbrace: "{",
  rcub: "}",
  rbrace: "}",
  verbar: "|",
  vert: "|",
  grave: "`",
  tilde: "~",
  hat: "^",
  nbsp: " ",
  tab: "\t",
  newline: "\n",
};

const JSON_ESCAPES: Record<string, string> = {
  "/": "/",
  "\\": "\\",
  '"': '"',
  "'": "'",
  n: "\n",
  r: "\r",
  t: "\t",
  b: "\b",
  f: "\f",
};

function isSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 0xa0;
}

/**
 * Decodes one layer of URL escapes, JSON escapes and HTML entities, drops whitespace and
 * lower-cases, keeping
 * for every output character the span of source text it came from.
 */
function decodeLayer(source: string): Layer {
  const chars: string[] = [];
  const start: number[] = [];
  const end: number[] = [];
  const push = (value: string, from: number, to: number): void => {
    for (let k = 0; k < value.length; k++) {
      if (isSpace(value.charCodeAt(k))) continue;
      // Lower-cased one character at a time, so indexes stay aligned with the spans.
      const lower = value[k].toLowerCase();
      chars.push(lower.length === 1 ? lower : value[k]);
      start.push(from);
      end.push(to);
    }
  };
  let i = 0;
  const n = source.length;
  while (i < n) {
    const c = source[i];
    if (c === "%" && i + 2 < n && /^[0-9a-fA-F]{2}$/.test(source.slice(i + 1, i + 3))) {
      // A run of %XX escapes is decoded as UTF-8; a bad run falls back to byte-by-byte.
      let j = i;
      const bytes: number[] = [];
      while (
        j + 2 < n && source[j] === "%" && /^[0-9a-fA-F]{2}$/.test(source.slice(j + 1, j + 3))
      ) {
        bytes.push(parseInt(source.slice(j + 1, j + 3), 16));
        j += 3;
      }
      if (bytes.every((b) => b < 0x80)) {
        for (let k = 0; k < bytes.length; k++) {
          push(String.fromCharCode(bytes[k]), i + 3 * k, i + 3 * k + 3);
        }
      } else {
        let decoded: string;
        try {
          decoded = new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
        } catch {
          decoded = String.fromCharCode(...bytes);
        }
        push(decoded, i, j);
      }
      i = j;
      continue;
    }
    if (c === "\\" && i + 1 < n) {
      const e = source[i + 1];
      if (e === "u" && /^[0-9a-fA-F]{4}$/.test(source.slice(i + 2, i + 6))) {
        push(String.fromCharCode(parseInt(source.slice(i + 2, i + 6), 16)), i, i + 6);
        i += 6;
        continue;
      }
      if (e === "x" && /^[0-9a-fA-F]{2}$/.test(source.slice(i + 2, i + 4))) {
        push(String.fromCharCode(parseInt(source.slice(i + 2, i + 4), 16)), i, i + 4);
        i += 4;
        continue;
      }
      const mapped = JSON_ESCAPES[e];
      if (mapped !== undefined) {
        push(mapped, i, i + 2);
        i += 2;
        continue;
      }
    }
    if (c === "&") {
      const m = /^&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]{2,10});?/.exec(
        source.slice(i, i + 13),
      );
      if (m) {
        const body = m[1];
        let value: string | undefined;
        if (body[0] === "#") {
          const code = body[1] === "x" || body[1] === "X"
            ? parseInt(body.slice(2), 16)
            : parseInt(body.slice(1), 10);
          if (code <= 0x10ffff) value = String.fromCodePoint(code);
        } else {
          value = NAMED_ENTITIES[body.toLowerCase()];
        }
        if (value !== undefined) {
          push(value, i, i + m[0].length);
          i += m[0].length;
          continue;
        }
      }
    }
    push(c, i, i + 1);
    i++;
  }
  return { text: chars.join(""), start, end };
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i];
    const b = i + 1 < bytes.length ? bytes[i + 1] : 0;
    const c = i + 2 < bytes.length ? bytes[i + 2] : 0;
    out += B64[a >> 2] + B64[((a & 3) << 4) | (b >> 4)];
    out += i + 1 < bytes.length ? B64[((b & 15) << 2) | (c >> 6)] : "=";
    out += i + 2 < bytes.length ? B64[c & 63] : "=";
  }
  return out;
}

/**
 * The base64 characters that depend only on `bytes` when they sit at byte offset 0, 1 or 2 of a
 * longer text: whatever surrounds the secret, one of these three appears in its base64.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const encoded = base64(padded);
    const first = Math.ceil((8 * offset) / 6);
    const last = Math.floor((8 * (offset + bytes.length)) / 6);
    const core = encoded.slice(first, last);
    if (core.length >= 6) out.push(core);
  }
  return out;
}

/** Every form of every secret to look for, lower-cased and without whitespace, longest first. */
function patternsOf(secrets: readonly string[]): string[] {
  const out = new Set<string>();
  const encoder = new TextEncoder();
  for (const raw of secrets) {
    if (typeof raw !== "string") continue;
    const trimmed = raw.trim();
    if (trimmed === "") continue;
    const forms = new Set([trimmed]);
    const token = trimmed.replace(/^(bearer|basic|token)\s+/i, "");
    if (token !== "") forms.add(token);
    for (const form of forms) {
      const plain = form.replace(/\s+/g, "").toLowerCase();
      if (plain !== "") out.add(plain);
      const variants = [form, `Bearer ${form}`];
      for (const variant of variants) {
        const bytes = encoder.encode(variant);
        const full = base64(bytes);
        for (const b64 of [full, full.replace(/=+$/, ""), ...base64Cores(bytes)]) {
          out.add(b64.toLowerCase());
          out.add(b64.replace(/\+/g, "-").replace(/\//g, "_").toLowerCase());
        }
      }
      let hex = "";
      for (const byte of encoder.encode(form)) hex += byte.toString(16).padStart(2, "0");
      if (hex.length >= 8) out.add(hex);
    }
  }
  return [...out].filter((p) => p !== "").sort((a, b) => b.length - a.length);
}
