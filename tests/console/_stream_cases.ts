// The console's live stream, on one store kind: what another connection writes (another process,
// for SQLite and PostgreSQL) reaches an open stream without the page polling; a stream opened
// again from its cursor repeats nothing; stopping the console ends every stream.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { consoleHandler } from "../../console/handler.ts";
import { listen } from "../../cli/_http_listen.ts";
import type { SessionStore } from "../../store/mod.ts";
import { waitingRun } from "../store/conformance_runs.ts";
import { answerRecorded } from "../../session/_answer.ts";
import { openStream, type StreamEvent } from "./_sse.ts";

const TOKEN = "stream-token";

/** Two handles on one store: the console's, and a writer's (another connection). */
export interface StorePair {
  readonly reader: SessionStore;
  readonly writer: SessionStore;
  /** How the console should learn of changes on this store. */
  readonly feed: "notify" | "probe" | "poll";
}

interface Page {
  session: string;
  signals: { seq: number; kind: string }[];
  messages: { id: string }[];
  lastSeq: number;
  messageCount: number;
  more: boolean;
}

const timeline = (e: StreamEvent) => e.event === "timeline";

/** Registers the live-stream cases for a store kind; `open` makes a fresh pair per case. */
export function streamCases(name: string, open: () => Promise<StorePair>): void {
  describe(`the console's live stream (${name})`, () => {
    async function consoleOn(pair: StorePair, extra: Record<string, unknown> = {}) {
      const stopping = new AbortController();
      const server = await listen(
        consoleHandler(pair.reader, {
          tokens: { ana: TOKEN },
          signal: stopping.signal,
          // No periodic re-read: what arrives, arrives through the change stream.
          fallbackMs: 600_000,
          ...extra,
        }),
        { host: "127.0.0.1", port: 0 },
      );
      const base = `http://127.0.0.1:${server.port}`;
      return {
        base,
        stopping,
        close: async () => {
          stopping.abort();
          await server.close();
        },
      };
    }

    async function signal(store: SessionStore, session: string, kind: string): Promise<void> {
      await store.insertSessionSignal({
        sessionId: session,
        kind,
        opId: "",
        ts: Date.now(),
        payload: { kind },
      });
    }

    it("sends the timeline from the cursor, then what another connection writes, as it is written", async () => {
      const pair = await open();
      const session = `s-${crypto.randomUUID()}`;
      for (let i = 0; i < 3; i++) await signal(pair.writer, session, `Before${i}`);
      const console = await consoleOn(pair);
      const stream = await openStream(
        `${console.base}/api/events?session=${encodeURIComponent(session)}`,
        TOKEN,
      );
      try {
        assert.equal(stream.headers.get("x-hookscope-feed"), pair.feed);
        assert.match(stream.headers.get("content-type") ?? "", /^text\/event-stream/);
        const first = (await stream.next(timeline)).data as Page;
        assert.equal(first.session, session);
        assert.deepEqual(first.signals.map((s) => s.kind), ["Before0", "Before1", "Before2"]);
        await signal(pair.writer, session, "Live");
        const live = (await stream.next(timeline)).data as Page;
        assert.deepEqual(live.signals.map((s) => s.kind), ["Live"]);
        assert.equal(live.lastSeq, first.lastSeq + 1);
        // A signal of another session does not appear in this timeline.
        await signal(pair.writer, `other-${session}`, "Elsewhere");
        await signal(pair.writer, session, "Again");
        const again = (await stream.next(timeline)).data as Page;
        assert.deepEqual(again.signals.map((s) => s.kind), ["Again"]);
        // Opened again from the cursor: nothing repeats.
        stream.close();
        const resumed = await openStream(
          `${console.base}/api/events?session=${
            encodeURIComponent(session)
          }&afterSeq=${again.lastSeq}&messagesFrom=${again.messageCount}`,
          TOKEN,
        );
        try {
          const empty = (await resumed.next(timeline)).data as Page;
          assert.deepEqual(empty.signals, []);
          await signal(pair.writer, session, "After");
          const next = (await resumed.next((e) =>
            timeline(e) && (e.data as Page).signals.length > 0
          )).data as Page;
          assert.deepEqual(next.signals.map((s) => s.kind), ["After"]);
        } finally {
          resumed.close();
        }
      } finally {
        stream.close();
        await console.close();
        await pair.writer.close();
        await pair.reader.close();
      }
    });

    it("sends the pending approvals when a run starts waiting and when it is answered", async () => {
      const pair = await open();
      const console = await consoleOn(pair);
      const stream = await openStream(`${console.base}/api/events`, TOKEN);
      const runId = `r-${crypto.randomUUID()}`;
      type Row = { runId: string; answer?: { by?: string } };
      const mine = (e: StreamEvent) =>
        e.event === "pending" && (e.data as Row[]).some((row) => row.runId === runId);
      try {
        await stream.next((e) => e.event === "pending");
        const run = waitingRun(runId);
        await pair.writer.saveRun(run);
        // A run that stops records ApprovalRequested (PostgreSQL's change stream carries signals
        // and messages, not run records).
        await signal(pair.writer, "s1", "ApprovalRequested");
        const waiting = (await stream.next(mine)).data as Row[];
        assert.equal(waiting.find((row) => row.runId === runId)?.answer, undefined);
        // As the CLI and the console answer: stored, and recorded as ApprovalAccepted.
        assert.equal(
          await answerRecorded(pair.writer, runId, "c1", { approve: true, by: "bo" }),
          true,
        );
        const answered = (await stream.next((e) =>
          mine(e) && (e.data as Row[]).find((row) =>
              row.runId === runId
            )?.answer !== undefined
        )).data as Row[];
        assert.equal(answered.find((row) => row.runId === runId)?.answer?.by, "bo");
      } finally {
        stream.close();
        await console.close();
        await pair.writer.close();
        await pair.reader.close();
      }
    });

    it("stopping the console ends its streams; past maxStreams a stream is refused", async () => {
      const pair = await open();
      const console = await consoleOn(pair, { maxStreams: 1 });
      const stream = await openStream(`${console.base}/api/events`, TOKEN);
      try {
        await stream.next((e) => e.event === "sessions");
        const refused = await fetch(`${console.base}/api/events`, {
          headers: { authorization: `Bearer ${TOKEN}` },
          signal: AbortSignal.timeout(10_000),
        });
        assert.equal(refused.status, 503);
        await refused.body?.cancel();
        console.stopping.abort();
        await stream.ended;
      } finally {
        stream.close();
        await console.close();
        await pair.writer.close();
        await pair.reader.close();
      }
    });
  });
}
