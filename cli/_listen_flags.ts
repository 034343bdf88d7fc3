/**
 * The flags that say where `serve` and `console` listen: `--port` and whether `--host` is a
 * loopback address (anything else needs a token).
 *
 * @module
 */

import { UsageError } from "./_output.ts";

/**
 * `--port`'s value: a decimal integer from 0 to 65535 (0 picks a free port), `fallback` when the
 * flag is absent, or a {@linkcode UsageError}. `0x4e21`, `1e3`, `' 80'` and an empty value are
 * refused (`Number()` reads them as 20001, 1000, 80 and 0).
 *
 * @example
 * ```ts
 * import { parsePort } from "./_listen_flags.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(parsePort("serve", "8080", 8787), 8080);
 * assert.equal(parsePort("serve", undefined, 8787), 8787);
 * assert.throws(() => parsePort("serve", "0x4e21", 8787), /--port must be a decimal integer/);
 * ```
 */
export function parsePort(command: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const text = typeof value === "string" ? value : String(value);
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65_535)) {
    throw new UsageError(
      `hookscope ${command}: --port must be a decimal integer from 0 to 65535 (0 picks a free ` +
        `port); got ${JSON.stringify(text)}`,
    );
  }
  return port;
}

/**
 * Whether `host` is a loopback address (`localhost`, `127.x.y.z`, `::1`): only then may a server
 * listen without a token.
 *
 * @example
 * ```ts
 * import { isLoopback } from "./_listen_flags.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isLoopback("127.0.0.1"), true);
 * assert.equal(isLoopback("0.0.0.0"), false);
 * assert.equal(isLoopback("127.example.com"), false);
 * ```
 */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" ||
    /^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$/.test(host);
}
