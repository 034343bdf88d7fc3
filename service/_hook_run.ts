// Private plumbing between HookEvent, HookedEvent and HookLogger (nothing here is exported from
// the service entry):
//
// - `hookRuns` reaches into `HookEvent` and `HookedEvent`: a hook event's run state (see
//   `_phase_run.ts`), the hook event of a run state that ran without one, phase hooks attached as
//   run states, and an event's run from `IModel.invoke` without a promise of its own.
// - `DeferredEntry` is a log entry rendered when the logger's entries are read or handed to a
//   sink: a hook run is logged as a snapshot of its outcome and turned into its JSON record
//   only if someone looks.

import type { HookEvent } from "./hook_event.ts";
import type { HookedEvent } from "./hooked_event.ts";
import type { PhaseRun } from "./_phase_run.ts";

/** Filled by the static blocks of `HookEvent` and `HookedEvent`. */
export const hookRuns: {
  /** A hook event's run state. */
  state: ((hook: HookEvent) => PhaseRun) | null;
  /** Makes the hook event of a run state that has none yet. */
  adopt: ((run: PhaseRun) => HookEvent) | null;
  /** Attaches phase hooks to an event as run states (their hook events are made on demand). */
  attach: ((event: HookedEvent, pre: PhaseRun | null, post: PhaseRun | null) => void) | null;
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
} = { state: null, adopt: null, attach: null, invokeEvent: null };

/** A log entry rendered on first read. */
export abstract class DeferredEntry {
  /** The plain record this entry stands for. */
  abstract render(): Record<string, unknown>;
}
