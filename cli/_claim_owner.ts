/**
 * The owner name `hookscope resume` claims runs under, and the check `hookscope release` makes
 * with it: a claim by a resume process that still runs on this machine is not released by
 * mistake.
 *
 * @module
 */

import { hostname } from "node:os";
import process from "node:process";

const OWNER = /^hookscope resume \(pid (\d+) on (.+)\)$/;

/** `hookscope resume (pid <pid> on <host>)`: who this process claims a run as. */
export function resumeOwner(): string {
  return `hookscope resume (pid ${process.pid} on ${hostname()})`;
}

/**
 * The process id when `owner` names a `hookscope resume` process on this machine that is still
 * running (a signal-0 probe succeeds or is refused for permission), else `null`.
 */
export function liveLocalClaimer(owner: string): number | null {
  const match = OWNER.exec(owner);
  if (match === null || match[2] !== hostname()) return null;
  const pid = Number(match[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM" ? pid : null;
  }
}
