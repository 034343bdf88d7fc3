// The observer's bounded event log and its named streams. Streams hold absolute positions in
// the log, so evicting the oldest stored slot drops exactly that emission from every stream.
// A slot may hold a deferred hook signal: it is built on first read and the slot keeps the
// envelope, so every read sees the same object.

import { DeferredHookSignal } from "./_deferred_signal.ts";

/** Stored events, oldest first, at most `maxEvents` of them, plus the named streams. */
export class EventLog {
  readonly maxEvents: number;
  #events: unknown[] = [];
  #head = 0;
  /** The absolute position of `#events[0]`: how many slots compaction has dropped. */
  #offset = 0;
  /** Per stream, the absolute positions of the events appended to it. */
  #streams = new Map<string, number[]>();

  constructor(maxEvents: number) {
    this.maxEvents = maxEvents;
  }

  /** Stores an event; returns its absolute position. */
  store(event: unknown): number {
    const position = this.#offset + this.#events.push(event) - 1;
    if (this.#events.length - this.#head > this.maxEvents) this.#evictOldest();
    return position;
  }

  /** Appends the event stored at `position` to the stream `name`. */
  append(name: string, position: number): void {
    let stream = this.#streams.get(name);
    if (stream === undefined) {
      stream = [];
      this.#streams.set(name, stream);
    }
    stream.push(position);
  }

  /** The stored events, oldest first (a copy). */
  events(): unknown[] {
    const events = this.#events;
    const out: unknown[] = new Array(events.length - this.#head);
    for (let i = this.#head; i < events.length; i++) out[i - this.#head] = this.#read(i);
    return out;
  }

  /** The events of a named stream, in order (a copy); an unknown name gives `[]`. */
  stream(name: string): unknown[] {
    const positions = this.#streams.get(name);
    if (positions === undefined) return [];
    const out: unknown[] = new Array(positions.length);
    for (let i = 0; i < positions.length; i++) out[i] = this.#read(positions[i] - this.#offset);
    return out;
  }

  /** Calls `visit` with each stored event, oldest first. */
  forEach(visit: (event: unknown) => void): void {
    for (let i = this.#head; i < this.#events.length; i++) visit(this.#read(i));
  }

  /** The event in slot `index`, built (once) if it was deferred. */
  #read(index: number): unknown {
    const event = this.#events[index];
    if (!(event instanceof DeferredHookSignal)) return event;
    return this.#events[index] = event.build();
  }

  /**
   * Evicts the oldest stored event and, from every stream, the entries for that stored slot only
   * (streams hold positions, so an event stored twice loses only its oldest emission).
   */
  #evictOldest(): void {
    const evicted = this.#offset + this.#head;
    this.#events[this.#head] = undefined;
    this.#head++;
    if (this.#head >= 1024 && this.#head * 2 >= this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#offset += this.#head;
      this.#head = 0;
    }
    if (this.#streams.size === 0) return;
    for (const stream of this.#streams.values()) {
      while (stream.length > 0 && stream[0] <= evicted) stream.shift();
    }
  }
}
