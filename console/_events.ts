// The console's live stream (`GET /api/events`): Server-Sent Events carrying a session's new
// timeline rows, and the pending approvals and sessions whenever they change. It is woken by the
// store's change stream (see _live.ts) and reads from the client's cursor, so a stream that is
// cut and opened again with the last cursor loses nothing and repeats nothing.

import type { MessageRecord, SessionStore, SignalRow } from "../store/session_store.ts";
import type { LiveFeed } from "./_live.ts";

/** One page of a session's timeline after a cursor. */
export interface TimelinePage {
  /** The session. */
  readonly session: string;
  /** Signal rows after `afterSeq`, in `seq` order. */
  readonly signals: SignalRow[];
  /** Messages from index `messagesFrom` of the session's messages. */
  readonly messages: MessageRecord[];
  /** The cursor to read after next time. */
  readonly lastSeq: number;
  /** How many of the session's messages have been read, with these. */
  readonly messageCount: number;
  /** Whether more signals wait (the page was full). */
  readonly more: boolean;
}

/** Reads a session's timeline after `afterSeq` signals and `messagesFrom` messages. */
export async function readTimeline(
  store: SessionStore,
  session: string,
  afterSeq: number,
  messagesFrom: number,
  limit: number,
): Promise<TimelinePage> {
  const signals = await store.listSessionSignals(session, { afterSeq, limit });
  const messages = (await store.listMessages({ sessionId: session })).slice(messagesFrom);
  return {
    session,
    signals,
    messages,
    lastSeq: signals.at(-1)?.seq ?? afterSeq,
    messageCount: messagesFrom + messages.length,
    more: signals.length === limit,
  };
}

/** The sessions list of the console (with how many calls wait in each). */
export async function readSessions(store: SessionStore): Promise<unknown[]> {
  const sessions = await store.listSessions();
  const pending = await store.listPendingApprovals();
  return sessions.map((s) => ({
    id: s.id,
    status: s.status,
    lastActivityAt: s.lastActivityAt ?? null,
    pending: pending.filter((p) => p.sessionId === s.id).length,
  }));
}

/** What a stream follows and from where. */
export interface StreamRequest {
  /** The session whose timeline is followed, if any. */
  readonly session?: string;
  /** The timeline cursor: signals after this `seq`. */
  readonly afterSeq: number;
  /** The timeline cursor: messages from this index. */
  readonly messagesFrom: number;
}

/** How a stream reads and paces. */
export interface StreamOptions {
  /** Most signals in one timeline event after the first (default 5 000). */
  readonly pageSize: number;
  /** Most signals in the first timeline event, for a quick first paint (default 500). */
  readonly firstPageSize?: number;
  /** Fewest milliseconds between two reads of the lists (default 250). */
  readonly listsEveryMs?: number;
  /** How often a comment keeps the connection alive, in milliseconds (default 5 000: under idle
   * timeouts of servers and proxies, such as Bun's 10 s). */
  readonly keepAliveMs?: number;
  /** Ends the stream (the console is stopping). */
  readonly signal?: AbortSignal;
  /** Called once the stream has ended, however it ended. */
  readonly onEnd?: () => void;
}

const encoder = new TextEncoder();

/**
 * A `text/event-stream` body: `timeline` events (a {@linkcode TimelinePage}, from the cursor on),
 * `pending` (the `PendingApprovalRow[]`) and `sessions` events when they change, `error` events
 * when a read fails (the stream goes on), and a comment every `keepAliveMs`.
 */
export function eventStream(
  store: SessionStore,
  feed: LiveFeed,
  request: StreamRequest,
  options: StreamOptions,
): ReadableStream<Uint8Array> {
  let afterSeq = request.afterSeq;
  let messagesFrom = request.messagesFrom;
  const session = request.session;
  const listsEveryMs = options.listsEveryMs ?? 250;
  let first = true;
  let timelineDue = session !== undefined;
  let listsDue = true;
  let lastLists = 0;
  let lastPending = "";
  let lastSessions = "";
  let running = false;
  let ended = false;
  let listsTimer: ReturnType<typeof setTimeout> | undefined;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let remove: (() => void) | undefined;
  let room: (() => void) | undefined;
  let out!: ReadableStreamDefaultController<Uint8Array>;

  const end = (): void => {
    if (ended) return;
    ended = true;
    clearTimeout(listsTimer);
    clearInterval(keepAlive);
    remove?.();
    room?.();
    options.signal?.removeEventListener("abort", stop);
    options.onEnd?.();
  };
  const stop = (): void => {
    if (ended) return;
    end();
    try {
      out.close();
    } catch { /* already closed */ }
  };
  const send = (event: string, data: unknown): void => {
    if (ended) return;
    out.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
  };
  /** Waits until the client has read what was sent (back pressure for a long backlog). */
  const drained = (): Promise<void> =>
    (out.desiredSize ?? 1) > 0 || ended
      ? Promise.resolve()
      : new Promise<void>((resolve) => (room = resolve));

  const readLists = async (): Promise<void> => {
    lastLists = Date.now();
    const pending = await store.listPendingApprovals();
    const pendingText = JSON.stringify(pending);
    if (pendingText !== lastPending) {
      lastPending = pendingText;
      send("pending", pending);
    }
    const sessions = await readSessions(store);
    const sessionsText = JSON.stringify(sessions);
    if (sessionsText !== lastSessions) {
      lastSessions = sessionsText;
      send("sessions", sessions);
    }
  };

  const readNew = async (): Promise<void> => {
    for (;;) {
      const limit = first ? options.firstPageSize ?? 500 : options.pageSize;
      const page = await readTimeline(store, session!, afterSeq, messagesFrom, limit);
      const fresh = first || page.signals.length > 0 || page.messages.length > 0;
      first = false;
      afterSeq = page.lastSeq;
      messagesFrom = page.messageCount;
      if (fresh) send("timeline", page);
      if (!page.more || ended) return;
      await drained();
    }
  };

  const run = async (): Promise<void> => {
    if (running || ended) return;
    running = true;
    try {
      while ((timelineDue || listsDue) && !ended) {
        if (timelineDue) {
          timelineDue = false;
          await readNew();
        }
        if (listsDue) {
          const wait = lastLists + listsEveryMs - Date.now();
          if (wait > 0) {
            listsTimer ??= setTimeout(() => {
              listsTimer = undefined;
              void run();
            }, wait);
            break;
          }
          listsDue = false;
          await readLists();
        }
      }
    } catch (error) {
      send("error", { error: (error as Error)?.message ?? String(error) });
    } finally {
      running = false;
    }
    if ((timelineDue || (listsDue && listsTimer === undefined)) && !ended) void run();
  };

  return new ReadableStream<Uint8Array>({
    async start(controller) {
      out = controller;
      if (options.signal?.aborted) return stop();
      options.signal?.addEventListener("abort", stop, { once: true });
      keepAlive = setInterval(() => {
        if (!ended) out.enqueue(encoder.encode(": keep-alive\n\n"));
      }, options.keepAliveMs ?? 5_000);
      try {
        remove = await feed.add((sessions) => {
          if (session !== undefined && (sessions === null || sessions.has(session))) {
            timelineDue = true;
          }
          listsDue = true;
          void run();
        });
      } catch (error) {
        send("error", { error: (error as Error)?.message ?? String(error) });
      }
      if (ended) remove?.();
      else void run();
    },
    pull() {
      const resume = room;
      room = undefined;
      resume?.();
    },
    cancel() {
      end();
    },
  }, { highWaterMark: 8 });
}
