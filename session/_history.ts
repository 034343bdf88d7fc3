// How a restored session puts stored messages back into a Branch (with their ids and times, and
// without running any message callback) without a public setter.

import type { Branch } from "./branch.ts";
import type { Message } from "./message.ts";

type Load = (messages: readonly Message[]) => void;

const loaders = new WeakMap<Branch, Load>();

/** Called once by each Branch's constructor. */
export function registerHistory(branch: Branch, load: Load): void {
  loaders.set(branch, load);
}

/** Appends already-made messages to a branch, silently. */
export function loadHistory(branch: Branch, messages: readonly Message[]): void {
  loaders.get(branch)?.(messages);
}
