/**
 * Credentials of the model server as the CLI handles them: a user name and password in
 * `--base-url` become a Basic `Authorization` header and leave the URL (so they are never
 * printed or stored), and everything the CLI persists passes through one redaction: the known
 * credentials in any encoding (`redactSecrets`) and strings shaped like API keys.
 *
 * @module
 */

import { REDACTED, redactSecrets } from "../core/redact.ts";
import type { SessionStore } from "../store/session_store.ts";

/** A model server URL split into what may be shown and what must not. */
export interface ModelServer {
  /** The URL without user name and password: safe to print and store. */
  url: string;
  /** Headers carrying the URL's credentials (`Authorization: Basic …`), if it had any. */
  headers?: Record<string, string>;
  /** Every credential to redact: the password, the Basic credential, the API key. */
  secrets: string[];
}

/**
 * Splits `baseURL` into a URL without user info and the headers that carry it. With an API key,
 * the key's `Authorization: Bearer` replaces the URL's Basic credentials (both are redacted).
 */
export function modelServer(baseURL: string, apiKey?: string): ModelServer {
  const secrets: string[] = apiKey ? [apiKey] : [];
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    return { url: baseURL, secrets };
  }
  if (url.username === "" && url.password === "") return { url: baseURL, secrets };
  const user = safeDecode(url.username);
  const password = safeDecode(url.password);
  const pair = `${user}:${password}`;
  const basic = btoa(String.fromCharCode(...new TextEncoder().encode(pair)));
  // The user name alone is not a secret (and may be a common word such as "user").
  secrets.push(pair, `Basic ${basic}`, basic, url.password, password);
  url.username = "";
  url.password = "";
  return {
    url: url.toString().replace(/\/+$/, ""),
    headers: { authorization: `Basic ${basic}` },
    secrets: secrets.filter((secret) => secret.length >= 3),
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Strings shaped like provider API keys and tokens, redacted wherever they appear in what the
 * CLI stores, known or not: `sk-…` (OpenAI, Anthropic), GitHub, Slack, AWS access key ids,
 * Google API keys, bearer tokens and PEM private key blocks.
 */
const KEY_SHAPES: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\b[Bb]earer\s+[A-Za-z0-9._~+/-]{16,}=*/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** `text` without the known `secrets` (any encoding) and without key-shaped strings. */
export function redactCredentials(text: string, secrets: readonly string[]): string {
  let out = redactSecrets(text, secrets);
  for (const shape of KEY_SHAPES) out = out.replace(shape, REDACTED);
  return out;
}

/** A deep copy of `value` with every string passed through `clean` (keys included). */
function cleanDeep(value: unknown, clean: (text: string) => string, depth = 0): unknown {
  if (typeof value === "string") return clean(value);
  if (depth > 64 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => cleanDeep(item, clean, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, clean(key), {
      value: cleanDeep(item, clean, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The store methods that write rows, each redacted before it reaches the database. */
const WRITES = new Set([
  "createSession",
  "updateSession",
  "updateBranch",
  "insertMessage",
  "insertSessionSignal",
  "saveRun",
  "answerApproval",
]);

/**
 * `store` with every row it writes (sessions, branches, messages, signals, runs, answers)
 * passed through `clean` first, so a credential the model echoes, or one that reached an error
 * message, is never persisted in clear. Reads and everything else go to `store` unchanged.
 */
export function redactingStore(store: SessionStore, clean: (text: string) => string): SessionStore {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (typeof property === "string" && WRITES.has(property)) {
        return (...args: unknown[]) =>
          value.apply(target, args.map((arg) => cleanDeep(arg, clean)));
      }
      return value.bind(target);
    },
  });
}
