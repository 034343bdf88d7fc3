import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { Session, Tool } from "../../mod.ts";
import { instrument } from "../../otel/mod.ts";

function body(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

describe("instrument() over OTLP/HTTP", () => {
  it("a real OTLP exporter delivers the session's spans to a receiver on 127.0.0.1", async () => {
    const received: { path: string; body: unknown }[] = [];
    const server = createServer(async (request, response) => {
      received.push({ path: request.url ?? "", body: JSON.parse(await body(request)) });
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces` });
      const provider = new BasicTracerProvider({
        spanProcessors: [new SimpleSpanProcessor(exporter)],
      });
      const session = new Session({ name: "otlp" });
      const branch = session.newBranch();
      branch.actions.register(new Tool({ name: "ping", execute: () => "pong" }));
      const stop = instrument(session, { tracer: provider.getTracer("hookscope-test") });
      await session.start({});
      await branch.act({ function: "ping", arguments: {} });
      await session.end({ status: "completed" });
      stop();
      await provider.forceFlush();
      await provider.shutdown();

      assert.ok(received.length >= 1);
      assert.ok(received.every((r) => r.path === "/v1/traces"));
      type Otlp = {
        resourceSpans: {
          scopeSpans: { spans: { name: string; attributes: { key: string }[] }[] }[];
        }[];
      };
      const names = received.flatMap((r) =>
        (r.body as Otlp).resourceSpans.flatMap((rs) =>
          rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.name))
        )
      );
      assert.deepEqual(names.sort(), ["execute_tool ping", "invoke_agent otlp"]);
      const tool = received.flatMap((r) =>
        (r.body as Otlp).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))
      ).find((s) => s.name === "execute_tool ping")!;
      assert.ok(tool.attributes.some((a) => a.key === "gen_ai.tool.call.id"));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
