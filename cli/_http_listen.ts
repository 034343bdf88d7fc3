/**
 * Serving a web-standard handler (`Request` in, `Response` out) on the runtime's own HTTP
 * server: `Deno.serve` on Deno (half the loopback round trip of `node:http` under Deno's Node
 * layer), `Bun.serve` on Bun (the shortest round trip measured here), `node:http` on Node, so
 * `serve` and the console share one handler shape.
 *
 * @module
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

/** A web-standard request handler. */
export type WebHandler = (request: Request) => Promise<Response> | Response;

/** Options of {@linkcode listen}. */
export interface ListenOptions {
  /** Address to bind. */
  readonly host: string;
  /** Port (0 picks a free one). */
  readonly port: number;
  /** Longest time for a whole request to arrive (node:http only), in milliseconds. */
  readonly requestTimeoutMs?: number;
}

/** A listening server. */
export interface Listening {
  /** The bound port. */
  readonly port: number;
  /** Stops accepting, waits for the requests in flight, and resolves. */
  close(): Promise<void>;
}

interface DenoServe {
  serve(
    options: {
      hostname: string;
      port: number;
      signal: AbortSignal;
      onListen: (addr: { port: number }) => void;
      onError: (error: unknown) => Response;
    },
    handler: (request: Request) => Promise<Response> | Response,
  ): { finished: Promise<void>; addr: { port: number } };
}

interface BunServe {
  serve(options: {
    hostname: string;
    port: number;
    idleTimeout?: number;
    fetch: (request: Request) => Promise<Response> | Response;
    error: (error: unknown) => Response;
  }): { port: number; stop(closeActiveConnections?: boolean): Promise<void> | void };
}

/**
 * Serves `handler` at `host:port` until `close()`.
 *
 * @example Answer on a free port
 * ```ts
 * import { listen } from "./_http_listen.ts";
 * import assert from "node:assert/strict";
 *
 * const server = await listen(() => new Response("ok"), { host: "127.0.0.1", port: 0 });
 * const response = await fetch(`http://127.0.0.1:${server.port}/`);
 * assert.equal(await response.text(), "ok");
 * await server.close();
 * ```
 */
export function listen(handler: WebHandler, options: ListenOptions): Promise<Listening> {
  const deno = (globalThis as { Deno?: Partial<DenoServe> }).Deno;
  if (typeof deno?.serve === "function") return listenDeno(deno as DenoServe, handler, options);
  const bun = (globalThis as { Bun?: Partial<BunServe> }).Bun;
  if (typeof bun?.serve === "function") return listenBun(bun as BunServe, handler, options);
  return listenNode(handler, options);
}

function listenBun(bun: BunServe, handler: WebHandler, options: ListenOptions): Promise<Listening> {
  // Bun closes a connection idle for `idleTimeout` seconds (default 10, at most 255): a request
  // may wait as long as the caller's deadline.
  const idle = Math.min(255, Math.max(10, Math.ceil((options.requestTimeoutMs ?? 0) / 1000)));
  const server = bun.serve({
    hostname: options.host,
    port: options.port,
    idleTimeout: idle,
    fetch: async (request) => {
      try {
        return await handler(request);
      } catch (error) {
        return failure(error);
      }
    },
    error: failure,
  });
  return Promise.resolve({
    port: server.port,
    close: async () => {
      await server.stop(false);
    },
  });
}

function failure(error: unknown): Response {
  return new Response(JSON.stringify({ error: String((error as Error)?.message ?? error) }), {
    status: 500,
    headers: { "content-type": "application/json" },
  });
}

function listenDeno(deno: DenoServe, handler: WebHandler, options: ListenOptions) {
  const controller = new AbortController();
  return new Promise<Listening>((ready, failed) => {
    try {
      const server = deno.serve({
        hostname: options.host,
        port: options.port,
        signal: controller.signal,
        onListen: (addr) =>
          ready({
            port: addr.port,
            close: async () => {
              controller.abort();
              await server.finished;
            },
          }),
        onError: failure,
      }, handler);
    } catch (error) {
      failed(error);
    }
  });
}

/**
 * The request body as a web stream, with back pressure; cancelling it stops reading (the
 * refusal is then sent with `connection: close`). Not `Readable.toWeb`: on Node 20 a cancel
 * followed by more data throws from inside the adapter.
 */
function bodyOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on("data", (chunk: Uint8Array) => {
        if (!open) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) req.pause();
      });
      req.once("end", () => {
        if (open) controller.close();
        open = false;
      });
      req.once("error", (error) => {
        if (open) controller.error(error);
        open = false;
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      open = false;
      req.pause();
    },
  }, { highWaterMark: 4 });
}

function toRequest(req: IncomingMessage, host: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) { for (const one of value) headers.append(name, one); }
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(`http://${host}${req.url ?? "/"}`, {
    method,
    headers,
    ...(hasBody ? { body: bodyOf(req), duplex: "half" } : {}),
  } as RequestInit);
}

async function send(response: Response, request: Request, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  // A refusal may leave the request body unread: the connection is not reused after it.
  if (response.status >= 400 || response.headers.get("connection") === "close") {
    headers.connection = "close";
    if (request.body !== null) void request.body.cancel().catch(() => {});
  }
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  // Streamed chunk by chunk (a live feed never ends); a client that goes away cancels it. The
  // client may have gone while the handler ran: "close" has then fired already and never comes
  // again, so `destroyed` is checked before every wait.
  const reader = response.body.getReader();
  const cancel = (): void => void reader.cancel().catch(() => {});
  res.once("close", cancel);
  try {
    while (!res.destroyed) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value) && !res.destroyed) await drained(res);
    }
  } finally {
    res.off("close", cancel);
    if (res.destroyed) cancel();
    res.end();
  }
}

/** Resolves once `res` can take more, or has closed; leaves no listener behind either way. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resume) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resume();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

function listenNode(handler: WebHandler, options: ListenOptions): Promise<Listening> {
  const server = createServer((req, res) => {
    (async () => {
      const request = toRequest(req, `${options.host}:${options.port}`);
      let response: Response;
      try {
        response = await handler(request);
      } catch (error) {
        response = failure(error);
      }
      await send(response, request, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  if (options.requestTimeoutMs !== undefined) server.requestTimeout = options.requestTimeoutMs;
  server.headersTimeout = 10_000;
  return new Promise<Listening>((ready, failed) => {
    server.once("error", failed);
    server.listen(options.port, options.host, () => {
      const address = server.address() as { port: number };
      ready({
        port: address.port,
        close: () => new Promise<void>((closed) => server.close(() => closed())),
      });
    });
  });
}
