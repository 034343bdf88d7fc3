/**
 * Installing a handler for a server-initiated request on an MCP client, without a value import
 * from the SDK.
 *
 * @module
 */

import { z } from "zod";
import { type DeadlineSignal, deadlineSignal } from "../core/_async.ts";

/**
 * The part of an MCP `Client` that {@linkcode mcpSampling} and {@linkcode mcpElicitation} use; a
 * connected SDK `Client` created with the `sampling` / `elicitation` capability fits it.
 */
export interface McpRequestClientLike {
  /** Sets the handler of one request method, keyed by the schema's `method` literal. */
  setRequestHandler(
    // deno-lint-ignore no-explicit-any
    schema: any,
    // deno-lint-ignore no-explicit-any
    handler: (request: any, extra: any) => unknown,
  ): void;
  /** Removes the handler of one request method. */
  removeRequestHandler?(method: string): void;
  /** The server's name and version after the handshake. */
  getServerVersion?(): { name?: string } | undefined;
}

/** What a handler is given besides the request (the SDK's `RequestHandlerExtra`, in part). */
export interface RequestExtra {
  /** Aborted when the server cancels the request or the connection closes. */
  signal?: AbortSignal;
}

const schemas = new Map<string, z.ZodType>();

// The SDK keys request handlers by the schema's `method` literal and accepts zod 4 schemas; it
// validates the request itself for sampling and elicitation before the handler runs.
function requestSchema(method: string): z.ZodType {
  let schema = schemas.get(method);
  if (!schema) {
    schema = z.object({
      method: z.literal(method),
      params: z.optional(z.record(z.string(), z.unknown())),
    }).loose();
    schemas.set(method, schema);
  }
  return schema;
}

/**
 * Sets `handler` for `method` on `client`; a client without the capability is a `TypeError`
 * naming it. Returns a function that removes the handler.
 */
export function installRequestHandler(
  client: McpRequestClientLike,
  method: string,
  capability: string,
  what: string,
  handler: (params: Record<string, unknown>, extra: RequestExtra) => Promise<unknown>,
): () => void {
  if (
    client === null || typeof client !== "object" ||
    typeof client.setRequestHandler !== "function"
  ) {
    throw new TypeError(`Cannot handle MCP ${what}: expected an MCP Client`);
  }
  try {
    client.setRequestHandler(
      requestSchema(method),
      (request: { params?: Record<string, unknown> }, extra: RequestExtra) =>
        handler(request?.params ?? {}, extra ?? {}),
    );
  } catch (error) {
    throw new TypeError(
      `Cannot handle MCP ${what}: the client refused a ${method} handler (${
        error instanceof Error ? error.message : String(error)
      }); create it with capabilities: { ${capability}: {} }`,
      { cause: error },
    );
  }
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    client.removeRequestHandler?.(method);
  };
}

/**
 * A signal aborted by `outer` or after `ms`; `done()` releases the timer and the listener. The
 * timer does not keep the process alive by itself.
 */
export function callSignal(
  outer: AbortSignal | undefined,
  ms: number,
  what: string,
): DeadlineSignal {
  return deadlineSignal(ms, outer, () => new Error(`MCP ${what} took longer than ${ms} ms`), {
    unref: true,
  });
}
