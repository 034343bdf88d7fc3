// The observer's routes: conditions on an allowed event's payload that append it to a named
// stream of the event log.

import type { EventLog } from "./_event_log.ts";
import type { Report } from "./_fan_out.ts";

/** One route: events whose payload satisfies `condition` go to the stream `into`. */
export interface Route {
  readonly condition: (payload: unknown) => boolean;
  readonly into: string;
}

/** The shared empty list. */
export const NO_ROUTES: readonly Route[] = Object.freeze([]) as readonly Route[];

/** Validates a `route` call and makes its route; throws a `TypeError` when invalid. */
export function routeOf(condition: unknown, options: { into: string } | undefined): Route {
  if (typeof condition !== "function") {
    throw new TypeError("Cannot route: condition must be a function");
  }
  const into = options?.into;
  if (typeof into !== "string" || into.length === 0) {
    throw new TypeError("Cannot route: into must be a non-empty stream name");
  }
  return { condition: condition as Route["condition"], into };
}

/**
 * Appends the event stored at `position` to the stream of every route whose condition holds for
 * `payload`; a throwing condition is reported (`"route"`) and skipped.
 */
export function applyRoutes(
  routes: readonly Route[],
  payload: unknown,
  position: number,
  log: EventLog,
  report: Report,
): void {
  for (let i = 0; i < routes.length; i++) {
    const route = routes[i];
    let hit: unknown;
    try {
      hit = route.condition(payload);
    } catch (error) {
      report(error, "route");
      continue;
    }
    if (hit) log.append(route.into, position);
  }
}
