// Serves a web-standard handler on node:http (Node, Bun and Deno's Node layer alike).

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

/** A listening console server. */
export interface ConsoleServer {
  /** The bound port. */
  readonly port: number;
  /** Stops accepting and closes open connections. */
  close(): Promise<void>;
}

function toRequest(req: IncomingMessage, host: string): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) { for (const v of value) headers.append(key, v); }
    else if (value !== undefined) headers.set(key, value);
  }
  const method = req.method ?? "GET";
  const init: RequestInit & { duplex?: string } = { method, headers };
  if (method !== "GET" && method !== "HEAD") {
    init.body = new ReadableStream<Uint8Array>({
      start(controller) {
        req.on("data", (chunk: Uint8Array) => controller.enqueue(new Uint8Array(chunk)));
        req.on("end", () => controller.close());
        req.on("error", (error) => controller.error(error));
      },
      cancel() {
        req.destroy();
      },
    });
    init.duplex = "half";
  }
  return new Request(`http://${req.headers.host ?? host}${req.url ?? "/"}`, init);
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => (headers[key] = value));
  const body = new Uint8Array(await response.arrayBuffer());
  headers["content-length"] = String(body.length);
  res.writeHead(response.status, headers);
  res.end(body);
}

/** Serves `handler` at `host:port` (0 picks a free port). */
export function listenConsole(
  handler: (request: Request) => Promise<Response>,
  host: string,
  port: number,
): Promise<ConsoleServer> {
  const server = createServer((req, res) => {
    handler(toRequest(req, host)).then(
      (response) => send(res, response),
      (error) =>
        send(
          res,
          new Response(JSON.stringify({ error: String((error as Error)?.message ?? error) }), {
            status: 500,
            headers: { "content-type": "application/json" },
          }),
        ),
    ).catch(() => res.destroy()).finally(() => {
      // A refused body may be left unread: do not keep the connection for another request.
      if (!req.complete) res.once("finish", () => req.destroy());
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        port: typeof address === "object" && address !== null ? address.port : port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
  });
}
