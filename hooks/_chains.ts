// The handler tables of one bus: per point, the registrations in run order and the flags the
// dispatch loops read. Copy-on-write: an emission keeps the arrays it started with. Private to
// the hooks folder.

import { HOOK_POINTS, type HookPoint } from "./hook_point.ts";
import type { AnyHandler, Chain, Entries, Entry } from "./_entry.ts";

/** Registration bookkeeping of one point. */
interface PointState {
  /** The epoch the point's arrays were copied in (see `Chains#writable`). */
  owned: number;
  /** How many entries have a non-zero priority. */
  ranked: number;
  /** How many entries need the option-aware path. */
  specials: number;
  /** How many handlers are not `async` functions. */
  syncs: number;
}

const EMPTY_CHAIN: Chain = Object.freeze([]) as Chain;
const EMPTY_ENTRIES: Entries = Object.freeze([]) as Entries;

/** The constructor of `async` functions (read from a literal; nothing runs at module load). */
const AsyncFunction = (async () => {}).constructor;

/** The per-point tables. The dispatch loops read them; only `insert` and `remove` write them. */
export class Chains {
  /** The handlers of each point, in run order. */
  readonly chains: Record<HookPoint, Chain>;
  /** The registrations of each point, in run order (parallel to `chains`). */
  readonly entries: Record<HookPoint, Entries>;
  /** Whether a point has a registration that needs the option-aware path. */
  readonly special: Record<HookPoint, boolean>;
  /** Whether every handler of a point is an `async` function (see `Dispatcher#awaitEach`). */
  readonly allAsync: Record<HookPoint, boolean>;
  /** Set by every emission that takes a point's arrays; see `#writable`. */
  taken = false;
  /** Registration bookkeeping per point (made at the first `on`). */
  #points: Partial<Record<HookPoint, PointState>> = {};
  /** Bumped at the first change after an emission; arrays copied in this epoch are ours alone. */
  #epoch = 0;

  constructor() {
    const chains = {} as Record<HookPoint, Chain>;
    const entries = {} as Record<HookPoint, Entries>;
    const special = {} as Record<HookPoint, boolean>;
    const allAsync = {} as Record<HookPoint, boolean>;
    for (const point of HOOK_POINTS) {
      chains[point] = EMPTY_CHAIN;
      entries[point] = EMPTY_ENTRIES;
      special[point] = false;
      allAsync[point] = false;
    }
    this.chains = chains;
    this.entries = entries;
    this.special = special;
    this.allAsync = allAsync;
  }

  /**
   * The point's bookkeeping, with its arrays ready to change in place. Emissions keep the arrays
   * they started with (copy-on-write snapshots), so the arrays are copied once after any
   * emission took them; changes with no emission in between reuse the copy. Registering n
   * handlers costs O(n) overall, not O(n²).
   */
  #writable(point: HookPoint): PointState {
    if (this.taken) {
      this.taken = false;
      this.#epoch++;
    }
    let state = this.#points[point];
    if (state === undefined) {
      state = { owned: -1, ranked: 0, specials: 0, syncs: 0 };
      this.#points[point] = state;
    }
    if (state.owned !== this.#epoch) {
      this.entries[point] = this.entries[point].slice();
      this.chains[point] = this.chains[point].slice();
      state.owned = this.#epoch;
    }
    return state;
  }

  /** Adds `entry` by priority (higher first), after equal priorities. */
  insert(point: HookPoint, entry: Entry): void {
    const state = this.#writable(point);
    const entries = this.entries[point] as Entry[];
    const chain = this.chains[point] as AnyHandler[];
    // By priority, higher first, after equal ones: entries stay sorted, so a binary search.
    let at = entries.length;
    if (entry.priority !== 0 || state.ranked !== 0) {
      let low = 0;
      while (low < at) {
        const mid = (low + at) >>> 1;
        if (entries[mid].priority >= entry.priority) low = mid + 1;
        else at = mid;
      }
    }
    if (at === entries.length) {
      entries.push(entry);
      chain.push(entry.handler);
    } else {
      entries.splice(at, 0, entry);
      chain.splice(at, 0, entry.handler);
    }
    this.#count(point, state, entry, 1);
  }

  /** Removes `entry`; a missing one is a no-op. */
  remove(point: HookPoint, entry: Entry): void {
    const index = this.entries[point].indexOf(entry);
    if (index === -1) return;
    const state = this.#writable(point);
    const entries = this.entries[point] as Entry[];
    const chain = this.chains[point] as AnyHandler[];
    if (index === 0) {
      // Engines trim the front of an array in place: removing in registration order stays O(1).
      entries.shift();
      chain.shift();
    } else if (index === entries.length - 1) {
      entries.pop();
      chain.pop();
    } else {
      entries.splice(index, 1);
      chain.splice(index, 1);
    }
    this.#count(point, state, entry, -1);
    if (entries.length === 0) {
      this.entries[point] = EMPTY_ENTRIES;
      this.chains[point] = EMPTY_CHAIN;
      state.owned = -1;
    }
  }

  /** Keeps the point's counts and the flags the emission paths read (`delta` is ±1). */
  #count(point: HookPoint, state: PointState, entry: Entry, delta: 1 | -1): void {
    if (entry.priority !== 0) state.ranked += delta;
    if (entry.special) state.specials += delta;
    if (!(entry.handler instanceof AsyncFunction)) state.syncs += delta;
    this.special[point] = state.specials !== 0;
    this.allAsync[point] = state.syncs === 0 && this.entries[point].length !== 0;
  }
}
