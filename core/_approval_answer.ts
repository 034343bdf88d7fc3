// An approval handler's answer, read once into a frozen `ApprovalAnswer` (private to the library:
// the act path and the Tool scope's own approvals use it).

import type { ApprovalAnswer } from "./approval.ts";
import { plainDataCopy } from "./_freeze.ts";

const APPROVED: ApprovalAnswer = Object.freeze({ approve: true });
const REJECTED: ApprovalAnswer = Object.freeze({ approve: false });

/**
 * The approver's answer as a frozen copy, each property read once; `updatedArgs` as deep-frozen
 * plain data (`NotPlainDataError` otherwise).
 */
export function normalizeAnswer(answer: unknown): ApprovalAnswer {
  if (answer === true) return APPROVED;
  if (answer === false) return REJECTED;
  if (answer !== null && typeof answer === "object") {
    const a = answer as Record<string, unknown>;
    const approve = a.approve;
    const by = a.by;
    if (approve === true) {
      const updatedArgs = a.updatedArgs;
      const out: { approve: true; updatedArgs?: Record<string, unknown>; by?: string } = {
        approve: true,
      };
      if (updatedArgs !== undefined) {
        if (updatedArgs === null || typeof updatedArgs !== "object" || Array.isArray(updatedArgs)) {
          throw new TypeError(`Cannot apply approval: updatedArgs must be a plain object`);
        }
        out.updatedArgs = plainDataCopy(
          updatedArgs,
          "Cannot apply approval",
          "updatedArgs",
          true,
        ) as Record<string, unknown>;
      }
      if (typeof by === "string") out.by = by;
      if (typeof a.effectsHash === "string") {
        (out as { effectsHash?: string }).effectsHash = a.effectsHash;
      }
      return Object.freeze(out);
    }
    if (approve === false) {
      const reason = a.reason;
      const interrupt = a.interrupt;
      const out: { approve: false; reason?: string; interrupt?: boolean; by?: string } = {
        approve: false,
      };
      if (typeof reason === "string") out.reason = reason;
      if (interrupt === true) out.interrupt = true;
      if (typeof by === "string") out.by = by;
      return Object.freeze(out);
    }
  }
  throw new TypeError(
    `Cannot apply approval: the approve handler must return a boolean or { approve: boolean, … }; got ${
      answer === null ? "null" : typeof answer
    }`,
  );
}
