// The client side of bench/claude_hooks.ts's `serve` rows, run as its own process (under Bun:
// the runtime Claude Code is built on; or Deno): POSTs PreToolUse events to a running
// `hookscope serve` at a steady rate and prints the latency of each, in milliseconds, as JSON.
//   raw    one keep-alive HTTP/1.1 connection written by hand (node:net): what the server takes
//   fetch  the runtime's fetch, as an http hook of Claude Code sends it
// Commands differ per request (no cache anywhere can answer a repeat).
// Usage: <runtime> bench/_hook_client.ts URL raw|fetch RATE REQUESTS [WARMUP]
import { connect } from "node:net";
import process from "node:process";

const [url, mode, rateArg, countArg, warmArg] = process.argv.slice(2);
const rate = Number(rateArg);
const count = Number(countArg);
const warmup = Number(warmArg ?? 100);
const target = new URL("/claude/hooks", url);

const event = (i: number): string =>
  JSON.stringify({
    session_id: `bench-${Math.floor(i / 50)}`,
    transcript_path: "/tmp/bench.jsonl",
    cwd: "/tmp",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: {
      command: i % 2 ? `ls -la src/dir${i}` : `rm -rf build/out${i}`,
      description: "bench",
    },
    tool_use_id: `toolu_bench_${i}`,
  });

function rawClient(): Promise<(body: string) => Promise<string>> {
  const socket = connect(Number(target.port), target.hostname);
  socket.setNoDelay(true);
  let buffer = "";
  let wake: (() => void) | null = null;
  socket.on("data", (chunk) => {
    buffer += chunk;
    wake?.();
  });
  const take = (): string | null => {
    const end = buffer.indexOf("\r\n\r\n");
    if (end < 0) return null;
    const length = /content-length: *(\d+)/i.exec(buffer.slice(0, end));
    if (length) {
      const stop = end + 4 + Number(length[1]);
      if (buffer.length < stop) return null;
      const body = buffer.slice(end + 4, stop);
      buffer = buffer.slice(stop);
      return body;
    }
    const last = buffer.indexOf("\r\n0\r\n\r\n", end);
    if (last < 0) return null;
    const body = buffer.slice(end + 4, last);
    buffer = buffer.slice(last + 7);
    return body;
  };
  return new Promise((ready, failed) => {
    socket.once("error", failed);
    socket.once("connect", () =>
      ready(async (body) => {
        socket.write(
          `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\n` +
            `content-type: application/json\r\ncontent-length: ${
              new TextEncoder().encode(body).length
            }\r\n\r\n${body}`,
        );
        for (;;) {
          const answer = take();
          if (answer !== null) return answer;
          await new Promise<void>((resume) => (wake = resume));
        }
      }));
  });
}

const post = mode === "raw" ? await rawClient() : async (body: string): Promise<string> => {
  const response = await fetch(target, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return await response.text();
};

for (let i = 0; i < warmup; i++) await post(event(i));
const times: number[] = [];
const gap = 1000 / rate;
const begun = performance.now();
for (let i = 0; i < count; i++) {
  const due = begun + i * gap;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const started = performance.now();
  const answer = await post(event(warmup + i));
  times.push(performance.now() - started);
  if (i % 2 === 0 && !answer.includes('"deny"')) throw new Error(`not denied: ${answer}`);
}
process.stdout.write(`${JSON.stringify(times)}\n`);
process.exit(0);
