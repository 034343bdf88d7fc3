// Telling subscribers of every process that changes were committed, after the commit and outside
// the write. Private to the PostgreSQL store.

/**
 * Merges "committed up to change N, in these sessions" notices and sends one at a time: NOTIFY
 * takes PostgreSQL's cluster-wide notification lock at commit, so notifying inside the write
 * would make every writer wait for the others. While one notice is in flight, later ones are
 * merged into the next. A lost notice loses nothing: subscribers read by change number and poll.
 */
export class Notifier {
  #notice: { to: number; sessions: Set<string> | null } | null = null;
  #notifying: Promise<void> | null = null;
  #send: (payload: string) => Promise<void>;
  #stopped: () => boolean;

  /**
   * `send` delivers one payload (and reports its own failures); `stopped` says the store has
   * ended, after which queued notices are dropped.
   */
  constructor(send: (payload: string) => Promise<void>, stopped: () => boolean) {
    this.#send = send;
    this.#stopped = stopped;
  }

  /** Queues a notice that changes up to `to` of these sessions (`null`: none) were committed. */
  notify(to: number, sessions: readonly (string | null)[]): void {
    const notice = this.#notice ??= { to, sessions: new Set() };
    notice.to = Math.max(notice.to, to);
    for (const session of sessions) {
      if (session === null) continue;
      notice.sessions?.add(session);
      if ((notice.sessions?.size ?? 0) > 100) notice.sessions = null; // "every session"
    }
    this.#notifying ??= this.#sendAll().finally(() => {
      this.#notifying = null;
    });
  }

  /** Resolves once no notice is queued or in flight. */
  async idle(): Promise<void> {
    while (this.#notifying !== null) await this.#notifying;
  }

  async #sendAll(): Promise<void> {
    for (let notice = this.#notice; notice !== null && !this.#stopped(); notice = this.#notice) {
      this.#notice = null;
      let sessions = notice.sessions === null ? "null" : JSON.stringify([...notice.sessions]);
      if (sessions.length > 7000) sessions = "null";
      await this.#send(`{"to":${notice.to},"s":${sessions}}`);
    }
  }
}
