// Private plumbing between HookEvent, HookedEvent and HookLogger (nothing here is exported from
// the service entry):
//
// - `hookRuns.run` runs a HookEvent and returns `undefined` when its handler settled
//   synchronously (the status is then final), or a promise otherwise. `invoke()` wraps it; the
//   phase hooks of a HookedEvent call it directly so a synchronous hook costs no promise; `now`,
//   when given, is a clock reading taken just before (the run's start, one read fewer).
// - `DeferredEntry` is a log entry rendered when the logger's entries are read or handed to a
//   sink: a hook run is logged as a snapshot of its outcome and turned into its JSON record
//   only if someone looks.

import type { HookEvent } from "./hook_event.ts";
import type { HookedEvent } from "./hooked_event.ts";

/** Filled by `HookEvent`'s static block. */
export const hookRuns: {
  run:
    | ((
      hook: HookEvent,
      signal: AbortSignal | undefined,
      now?: number,
    ) => Promise<void> | undefined)
    | null;
  /** A deferred log entry of the hook's last run, or `null` when it must be logged eagerly. */
  entry: ((hook: HookEvent) => DeferredEntry | null) | null;
  /**
   * Filled by `HookedEvent`'s static block: runs a PENDING event's template the way `invoke()`
   * does, with `now` (a clock reading taken just before, such as the event's creation) as its
   * start, and calls `ended` once the event has ended in any way, before the returned promise
   * settles with the event. `null` when the event's class replaces `invoke` or its template.
   */
  invokeEvent:
    | (<E extends HookedEvent>(
      event: E,
      signal: AbortSignal | undefined,
      now: number,
      ended: (event: E) => void,
    ) => Promise<E> | null)
    | null;
} = { run: null, entry: null, invokeEvent: null };

/** A log entry rendered on first read. */
export abstract class DeferredEntry {
  /** The plain record this entry stands for. */
  abstract render(): Record<string, unknown>;
}
