// Telling subscribers of every process that changes were committed, after the commit and outside
// the write. Private to the PostgreSQL store.

/**
 * After a notification found no listener, how long this process sends none, in milliseconds.
 * A subscription reads once more {@linkcode LATE_READ_MS} after it starts listening, so a change
 * committed in such a quiet spell, just before the listener appeared, is not left to the slow poll.
 */
export const QUIET_MS = 100;

/** When a subscription reads again after it (re)started listening; see {@linkcode QUIET_MS}. */
export const LATE_READ_MS = 2 * QUIET_MS + 50;

/**
 * Merges "committed up to change N, in these sessions" notices and sends one at a time: NOTIFY
 * takes PostgreSQL's cluster-wide notification lock at commit, so notifying inside the write
 * would make every writer wait for the others. While one notice is in flight, later ones are
 * merged into the next. A lost notice loses nothing: subscribers read by change number and poll.
 *
 * A notice is sent only while some connection listens on the channel: the send reports whether
 * one did, and after one that found none, notices are dropped for {@linkcode QUIET_MS} (unless
 * `listening()` says this process listens itself). A writer nobody follows then makes one round
 * trip per write instead of two, and no notifying transaction takes the notification lock.
 */
export class Notifier {
  #notice: { to: number; sessions: Set<string> | null } | null = null;
  /**
   * Whether {@linkcode Notifier.#sendAll} runs; cleared by it in the same synchronous step that
   * finds nothing queued, so a notice queued just after is never left for a sender that has ended.
   */
  #sending = false;
  #sent: Promise<void> = Promise.resolve();
  #send: (payload: string) => Promise<boolean>;
  #stopped: () => boolean;
  #listening: () => boolean;
  #quietUntil = 0;

  /**
   * `send` delivers one payload and resolves whether a listener was connected (it reports its own
   * failures; resolve `true` then); `stopped` says the store has ended, after which queued notices
   * are dropped; `listening` says this process has a subscription of its own.
   */
  constructor(
    send: (payload: string) => Promise<boolean>,
    stopped: () => boolean,
    listening: () => boolean,
  ) {
    this.#send = send;
    this.#stopped = stopped;
    this.#listening = listening;
  }

  /** Queues a notice that changes up to `to` of these sessions (`null`: none) were committed. */
  notify(to: number, sessions: readonly (string | null)[]): void {
    if (Date.now() < this.#quietUntil && !this.#listening()) return;
    const notice = this.#notice ??= { to, sessions: new Set() };
    notice.to = Math.max(notice.to, to);
    for (const session of sessions) {
      if (session === null) continue;
      notice.sessions?.add(session);
      if ((notice.sessions?.size ?? 0) > 100) notice.sessions = null; // "every session"
    }
    if (!this.#sending) {
      this.#sending = true;
      this.#sent = this.#sendAll();
    }
  }

  /** Resolves once no notice is queued or in flight. */
  async idle(): Promise<void> {
    while (this.#sending) await this.#sent;
  }

  async #sendAll(): Promise<void> {
    try {
      for (let notice = this.#notice; notice !== null && !this.#stopped(); notice = this.#notice) {
        this.#notice = null;
        let sessions = notice.sessions === null ? "null" : JSON.stringify([...notice.sessions]);
        if (sessions.length > 7000) sessions = "null";
        const heard = await this.#send(`{"to":${notice.to},"s":${sessions}}`);
        if (!heard) this.#quietUntil = Date.now() + QUIET_MS;
      }
    } finally {
      this.#sending = false;
    }
  }
}
