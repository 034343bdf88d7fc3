/**
 * The flags that say where `serve` and `console` listen: `--port` and whether `--host` is a
 * loopback address (anything else needs a token).
 *
 * @module
 */

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
