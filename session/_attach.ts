// How a Session attaches itself and its observer to a Branch without a public setter.

import type { Branch } from "./branch.ts";
import type { SessionObserver } from "./observer.ts";
import type { Session } from "./session.ts";

type Attach = (session: Session | null, observer: SessionObserver | null) => void;

const attachers = new WeakMap<Branch, Attach>();

/** Called once by each Branch's constructor. */
export function registerAttacher(branch: Branch, attach: Attach): void {
  attachers.set(branch, attach);
}

/** Sets (or with nulls clears) a branch's owning session and observer. */
export function attachBranch(
  branch: Branch,
  session: Session | null,
  observer: SessionObserver | null,
): void {
  attachers.get(branch)?.(session, observer);
}
