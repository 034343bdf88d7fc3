// Validation and normalization of run records, shared by every store so all accept and return the
// same runs.

import { argsHash, canonicalJson } from "../core/approval.ts";
import { ApprovalConflictError } from "./store_errors.ts";
import { toJsonSafe } from "../core/json_safe.ts";
import { isPlainObject } from "../core/_freeze.ts";
import {
  type PendingApprovalFilter,
  type PendingApprovalRow,
  RUN_STATUSES,
  type RunAnswer,
  type RunApproval,
  type RunApprovalEffects,
  type RunRecord,
  type RunStatus,
  type RunToolCall,
} from "./session_store.ts";
import { checkId } from "./_rows.ts";
import { describeValue, isRecord } from "../core/_util.ts";

function fail(action: string, what: string, value: unknown): never {
  throw new TypeError(`Cannot ${action}: ${what}; got ${describeValue(value)}`);
}

function finite(value: unknown, key: string, action: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    fail(action, `${key} must be a finite number`, value);
  }
  return value;
}

function nullableId(value: unknown, key: string, action: string): string | null {
  if (value === undefined || value === null) return null;
  return checkId(value, key, action);
}

function nullableString(value: unknown, key: string, action: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") fail(action, `${key} must be a string or null`, value);
  return value;
}

function object(value: unknown, key: string, action: string): Record<string, unknown> {
  if (!isRecord(value)) fail(action, `${key} must be an object`, value);
  return toJsonSafe(value) as Record<string, unknown>;
}

/** How many levels an answer's `updatedArgs` may nest (`{}` is one level; the stores' limit). */
export const MAX_ANSWER_ARGS_DEPTH = 64;
/** How many keys or items one object or array of an answer's `updatedArgs` may hold. */
export const MAX_ANSWER_ARGS_KEYS = 1000;

/**
 * A copy of an answer's `updatedArgs`, or a `TypeError` that says what is wrong. The arguments a
 * person approves are the ones that run, so they are never cut or rendered to fit: only plain JSON
 * (null, booleans, finite numbers, strings, arrays and plain objects) within
 * {@linkcode MAX_ANSWER_ARGS_DEPTH} levels and {@linkcode MAX_ANSWER_ARGS_KEYS} keys or items per
 * object or array is accepted. An object property that is `undefined` is left out, as JSON does.
 * `root` names the value in the message's path (`updatedArgs.items[3]`).
 */
export function approvedArgs(
  value: unknown,
  what: string,
  action: string,
  root = "updatedArgs",
): Record<string, unknown> {
  if (!isPlainObject(value)) fail(action, `${what} must be an object`, value);
  const refuse = (path: string, problem: string): never => {
    throw new TypeError(
      `Cannot ${action}: ${what} must be plain JSON within the stores' limits (${MAX_ANSWER_ARGS_DEPTH} levels, ${MAX_ANSWER_ARGS_KEYS} keys or items per object or array); ${path} ${problem}`,
    );
  };
  const open = new Set<object>();
  const copy = (item: unknown, path: string, depth: number): unknown => {
    switch (typeof item) {
      case "string":
      case "boolean":
        return item;
      case "number":
        if (!Number.isFinite(item)) refuse(path, `is ${String(item)}, not a finite number`);
        return item;
      case "object":
        break;
      default:
        return refuse(path, `is a ${typeof item}`);
    }
    if (item === null) return null;
    if (depth >= MAX_ANSWER_ARGS_DEPTH) {
      refuse(path, `nests deeper than ${MAX_ANSWER_ARGS_DEPTH} levels`);
    }
    if (open.has(item)) refuse(path, "refers to itself (a cycle)");
    open.add(item);
    try {
      if (Array.isArray(item)) {
        if (item.length > MAX_ANSWER_ARGS_KEYS) {
          refuse(path, `is an array of ${item.length} items (at most ${MAX_ANSWER_ARGS_KEYS})`);
        }
        const out: unknown[] = [];
        for (let i = 0; i < item.length; i++) {
          if (item[i] === undefined) refuse(`${path}[${i}]`, "is undefined (not JSON)");
          out.push(copy(item[i], `${path}[${i}]`, depth + 1));
        }
        return out;
      }
      if (!isPlainObject(item)) {
        return refuse(path, `is ${describeValue(item)}, not a plain object`);
      }
      const keys = Object.keys(item);
      if (keys.length > MAX_ANSWER_ARGS_KEYS) {
        refuse(path, `is an object of ${keys.length} keys (at most ${MAX_ANSWER_ARGS_KEYS})`);
      }
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        const field = (item as Record<string, unknown>)[key];
        if (field === undefined) continue;
        const at = /^[A-Za-z_$][\w$]*$/.test(key)
          ? `${path}.${key}`
          : `${path}[${JSON.stringify(key)}]`;
        Object.defineProperty(out, key, {
          value: copy(field, at, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    } finally {
      open.delete(item);
    }
  };
  return copy(value, root, 0) as Record<string, unknown>;
}

function normalizeApproval(value: unknown, runId: string, action: string): RunApproval {
  if (!isRecord(value)) fail(action, "each pending approval must be an object", value);
  const out: RunApproval = {
    runId,
    callId: checkId(value.callId, "pending callId", action),
    toolName: checkId(value.toolName, "pending toolName", action),
    args: object(value.args, "pending args", action),
    requestedAt: finite(value.requestedAt, "pending requestedAt", action),
  };
  if (value.sessionId !== undefined && value.sessionId !== null) {
    out.sessionId = checkId(value.sessionId, "pending sessionId", action);
  }
  if (value.branchId !== undefined && value.branchId !== null) {
    out.branchId = checkId(value.branchId, "pending branchId", action);
  }
  if (value.reason !== undefined && value.reason !== null) {
    if (typeof value.reason !== "string") fail(action, "pending reason must be a string", value);
    out.reason = value.reason;
  }
  if (value.argsHash !== undefined && value.argsHash !== null) {
    if (typeof value.argsHash !== "string" || !/^[0-9a-f]{64}$/.test(value.argsHash)) {
      fail(action, "pending argsHash must be a lowercase hex SHA-256", value.argsHash);
    }
    out.argsHash = value.argsHash;
  } else {
    out.argsHash = argsHash(out.args);
  }
  if (value.policy !== undefined && value.policy !== null) {
    if (typeof value.policy !== "string") fail(action, "pending policy must be a string", value);
    out.policy = value.policy;
  }
  if (value.expiresAt !== undefined && value.expiresAt !== null) {
    out.expiresAt = finite(value.expiresAt, "pending expiresAt", action);
  }
  if (value.answerableBy !== undefined && value.answerableBy !== null) {
    const list = value.answerableBy;
    if (!Array.isArray(list) || list.some((who) => typeof who !== "string" || who === "")) {
      fail(action, "pending answerableBy must be an array of names", list);
    }
    out.answerableBy = [...list as string[]];
  }
  if (value.interrupted === true) out.interrupted = true;
  if (value.effects !== undefined && value.effects !== null) {
    out.effects = normalizeEffects(value.effects, action);
  }
  return out;
}

const CHANGE_KEYS = ["path", "kind", "type", "target"] as const;

function normalizeEffects(value: unknown, action: string): RunApprovalEffects {
  if (!isRecord(value) || !Array.isArray(value.changes)) {
    fail(action, "pending effects must be an object with a changes array", value);
  }
  if (typeof value.hash !== "string" || !/^[0-9a-f]{64}$/.test(value.hash)) {
    fail(action, "pending effects hash must be a lowercase hex SHA-256", value.hash);
  }
  const count = finite(value.count, "pending effects count", action);
  const changes = value.changes.map((change) => {
    if (!isRecord(change)) fail(action, "each pending effects change must be an object", change);
    const out: RunApprovalEffects["changes"][number] = { path: "", kind: "" };
    for (const key of CHANGE_KEYS) {
      const field = change[key];
      if (field === undefined) continue;
      if (typeof field !== "string") {
        fail(action, `a pending effects change's ${key} must be a string`, field);
      }
      out[key] = field;
    }
    if (out.path === "" || out.kind === "") {
      fail(action, "a pending effects change needs a path and a kind", change);
    }
    for (const key of ["bytesBefore", "bytesAfter"] as const) {
      if (change[key] !== undefined) {
        out[key] = finite(change[key], `a pending effects change's ${key}`, action);
      }
    }
    return out;
  });
  return { changes, count, hash: value.hash };
}

/** Validates an answer; returns a JSON-safe copy with `answeredAt` set. */
export function normalizeAnswer(value: unknown, action: string, now = Date.now()): RunAnswer {
  if (!isRecord(value)) fail(action, "an answer must be an object", value);
  if (typeof value.approve !== "boolean") {
    fail(action, "an answer's approve must be a boolean", value.approve);
  }
  const out: RunAnswer = { approve: value.approve };
  if (value.updatedArgs !== undefined) {
    out.updatedArgs = approvedArgs(value.updatedArgs, "an answer's updatedArgs", action);
  }
  if (value.reason !== undefined) {
    if (typeof value.reason !== "string") {
      fail(action, "an answer's reason must be a string", value.reason);
    }
    out.reason = value.reason;
  }
  if (value.interrupt !== undefined) {
    if (typeof value.interrupt !== "boolean") {
      fail(action, "an answer's interrupt must be a boolean", value.interrupt);
    }
    out.interrupt = value.interrupt;
  }
  if (value.by !== undefined) {
    if (typeof value.by !== "string") fail(action, "an answer's by must be a string", value.by);
    out.by = value.by;
  }
  if (value.argsHash !== undefined) {
    if (typeof value.argsHash !== "string") {
      fail(action, "an answer's argsHash must be a string", value.argsHash);
    }
    out.argsHash = value.argsHash;
  }
  if (value.effectsHash !== undefined) {
    if (typeof value.effectsHash !== "string") {
      fail(action, "an answer's effectsHash must be a string", value.effectsHash);
    }
    out.effectsHash = value.effectsHash;
  }
  out.answeredAt = value.answeredAt === undefined
    ? now
    : finite(value.answeredAt, "an answer's answeredAt", action);
  return out;
}

function normalizeCall(value: unknown, action: string): RunToolCall {
  if (!isRecord(value)) fail(action, "each state tool call must be an object", value);
  if (typeof value.arguments !== "string") {
    fail(action, "a state tool call's arguments must be a string", value.arguments);
  }
  return {
    id: checkId(value.id, "state tool call id", action),
    name: checkId(value.name, "state tool call name", action),
    arguments: value.arguments,
  };
}

/** Validates a run record for `saveRun`; returns a JSON-safe copy. */
export function normalizeRun(run: unknown): RunRecord {
  const action = "save run";
  if (!isRecord(run)) fail(action, "run must be an object", run);
  const runId = checkId(run.runId, "runId", action);
  if (!RUN_STATUSES.includes(run.status as RunStatus)) {
    throw new TypeError(
      `Cannot ${action}: unknown status ${describeValue(run.status)}; valid statuses: ${
        RUN_STATUSES.map((s) => `"${s}"`).join(", ")
      }`,
    );
  }
  if (!Array.isArray(run.pending)) fail(action, "pending must be an array", run.pending);
  const pending = run.pending.map((p) => normalizeApproval(p, runId, action));
  const answersIn = run.answers === undefined ? {} : run.answers;
  if (!isRecord(answersIn)) fail(action, "answers must be an object", answersIn);
  const answers: Record<string, RunAnswer> = {};
  for (const [callId, answer] of Object.entries(answersIn)) {
    answers[callId] = normalizeAnswer(answer, action);
  }
  const state = run.state;
  if (!isRecord(state)) fail(action, "state must be an object", state);
  const turn = finite(state.turn, "state.turn", action);
  const maxTurns = finite(state.maxTurns, "state.maxTurns", action);
  if (!Array.isArray(state.toolCalls)) {
    fail(action, "state.toolCalls must be an array", state.toolCalls);
  }
  if (!Array.isArray(state.done) || state.done.some((id) => typeof id !== "string")) {
    fail(action, "state.done must be an array of call ids", state.done);
  }
  const normalizedState: RunRecord["state"] = {
    turn,
    maxTurns,
    toolCalls: state.toolCalls.map((c) => normalizeCall(c, action)),
    done: [...state.done as string[]],
  };
  if (state.request !== undefined) {
    normalizedState.request = object(state.request, "state.request", action);
  }
  if (state.stream !== undefined) {
    if (typeof state.stream !== "boolean") {
      fail(action, "state.stream must be a boolean", state.stream);
    }
    normalizedState.stream = state.stream;
  }
  if (state.messageId !== undefined) {
    normalizedState.messageId = checkId(state.messageId, "state.messageId", action);
  }
  if (state.started !== undefined) {
    if (!Array.isArray(state.started) || state.started.some((id) => typeof id !== "string")) {
      fail(action, "state.started must be an array of call ids", state.started);
    }
    normalizedState.started = [...state.started as string[]];
  }
  return {
    runId,
    sessionId: nullableId(run.sessionId, "sessionId", action),
    branchId: nullableId(run.branchId, "branchId", action),
    status: run.status as RunStatus,
    stoppedBy: nullableString(run.stoppedBy, "stoppedBy", action),
    pending,
    answers,
    state: normalizedState,
    owner: nullableString(run.owner, "owner", action),
    claimedAt: run.claimedAt === undefined || run.claimedAt === null
      ? null
      : finite(run.claimedAt, "claimedAt", action),
    error: nullableString(run.error, "error", action),
    createdAt: finite(run.createdAt, "createdAt", action),
    updatedAt: finite(run.updatedAt, "updatedAt", action),
  };
}

/** Validates `listPendingApprovals` filters. */
export function normalizePendingFilter(filter: unknown): PendingApprovalFilter {
  const action = "list pending approvals";
  if (filter === undefined || filter === null) return {};
  if (!isRecord(filter)) fail(action, "filter must be an object", filter);
  const out: PendingApprovalFilter = {};
  for (const key of ["sessionId", "runId", "callId"] as const) {
    if (filter[key] !== undefined) out[key] = checkId(filter[key], key, action);
  }
  return out;
}

/** The pending rows of one waiting run that match a filter, in call order. */
export function pendingRowsOf(
  run: RunRecord,
  filter: PendingApprovalFilter,
): PendingApprovalRow[] {
  if (run.status !== "waiting_approval") return [];
  if (filter.sessionId !== undefined && run.sessionId !== filter.sessionId) return [];
  if (filter.runId !== undefined && run.runId !== filter.runId) return [];
  const out: PendingApprovalRow[] = [];
  for (const pending of run.pending) {
    if (filter.callId !== undefined && pending.callId !== filter.callId) continue;
    const row: PendingApprovalRow = structuredClone(pending);
    const answer = run.answers[pending.callId];
    if (answer !== undefined) row.answer = structuredClone(answer);
    out.push(row);
  }
  return out;
}

/**
 * Whether the caller gave the answer's `answeredAt` itself: then an equal stored answer is its
 * own earlier attempt (see {@linkcode withAnswer}). A person's new answer never carries one (the
 * console and the CLI never pass it).
 */
export function givenTime(answer: unknown): boolean {
  return typeof answer === "object" && answer !== null &&
    (answer as { answeredAt?: unknown }).answeredAt !== undefined;
}

/**
 * Applies an answer to a run (a copy); `undefined` when the run is not waiting for that call.
 * `retrying` is a store's own retry of the same write (see the body).
 * The first answer wins: a call answered already, an approval past its `expiresAt`, an answerer
 * not in `answerableBy`, or an answer whose `argsHash` is not the pending one throws
 * `ApprovalConflictError` (and nothing changes). The stored answer carries the pending hash.
 */
export function withAnswer(
  run: RunRecord,
  callId: string,
  answer: RunAnswer,
  now: number,
  retrying = false,
): RunRecord | undefined {
  const given = run.answers[callId];
  if (given !== undefined) {
    // `retrying`: the same write again, by a store that did not hear whether its first attempt
    // committed (a connection lost mid-answer), or by a caller that names the answer's own
    // `answeredAt` (its retry of an answer it gave). Finding exactly that answer, to the
    // millisecond, means the first attempt did commit. Any other call is a new answer, refused
    // even when it is equal and given in the same millisecond (a replay).
    if (
      retrying &&
      canonicalJson({ ...answer, argsHash: given.argsHash, effectsHash: given.effectsHash }) ===
        canonicalJson(given)
    ) return run;
    throw new ApprovalConflictError(callId, "already_answered", toConflictAnswer(given));
  }
  if (run.status !== "waiting_approval") return undefined;
  const pending = run.pending.find((p) => p.callId === callId);
  if (pending === undefined) return undefined;
  if (pending.expiresAt !== undefined && now >= pending.expiresAt) {
    throw new ApprovalConflictError(
      callId,
      "expired",
      undefined,
      `the approval expired at ${new Date(pending.expiresAt).toISOString()}`,
    );
  }
  if (
    pending.answerableBy !== undefined &&
    (answer.by === undefined || !pending.answerableBy.includes(answer.by))
  ) {
    throw new ApprovalConflictError(
      callId,
      "not_allowed",
      undefined,
      `${
        answer.by === undefined ? "an answer without a name" : JSON.stringify(answer.by)
      } may not answer it; who may: ${
        pending.answerableBy.map((who) => JSON.stringify(who)).join(", ")
      }`,
    );
  }
  const expected = pending.argsHash ?? argsHash(pending.args);
  if (answer.argsHash !== undefined && answer.argsHash !== expected) {
    throw new ApprovalConflictError(
      callId,
      "args_changed",
      undefined,
      `the answer is for arguments with hash ${
        answer.argsHash.slice(0, 12)
      }…, the pending ones have ${expected.slice(0, 12)}…`,
    );
  }
  // A change-set approval: the answer is for exactly that change set. One that names the
  // arguments it saw (a console, the CLI) but no change set was given for an earlier approval of
  // the same call (before its staged run), and is refused.
  const effects = pending.effects?.hash;
  if (
    (answer.effectsHash !== undefined && answer.effectsHash !== effects) ||
    (effects !== undefined && answer.effectsHash === undefined && answer.argsHash !== undefined)
  ) {
    throw new ApprovalConflictError(
      callId,
      "args_changed",
      undefined,
      effects === undefined
        ? "the answer names a change set, but the pending call waits for approval of its arguments"
        : `the pending call waits for approval of a change set with hash ${
          effects.slice(0, 12)
        }…; the answer ${
          answer.effectsHash === undefined
            ? "names none"
            : `names ${answer.effectsHash.slice(0, 12)}…`
        }`,
    );
  }
  const next = structuredClone(run);
  next.answers[callId] = {
    ...answer,
    argsHash: expected,
    ...(effects !== undefined ? { effectsHash: effects } : {}),
  };
  next.updatedAt = now;
  return next;
}

function toConflictAnswer(
  answer: RunAnswer,
): ConstructorParameters<typeof ApprovalConflictError>[2] {
  return structuredClone(answer) as ConstructorParameters<typeof ApprovalConflictError>[2];
}

/**
 * Takes a claim back (a copy, waiting for approval again, without owner); `undefined` unless the
 * run is `running` under a claim by exactly `owner`.
 */
export function withRelease(run: RunRecord, owner: string, now: number): RunRecord | undefined {
  if (run.status !== "running" || run.owner !== owner) return undefined;
  const next = structuredClone(run);
  // Calls the claimer had started may have run: they wait for a person's word again.
  const started = next.state.started ?? [];
  for (const pending of next.pending) {
    if (!started.includes(pending.callId)) continue;
    pending.interrupted = true;
    delete next.answers[pending.callId];
  }
  delete next.state.started;
  next.status = "waiting_approval";
  next.owner = null;
  next.claimedAt = null;
  next.updatedAt = now;
  return next;
}

/** Applies a claim to a run (a copy); `undefined` when the run is not waiting for approval. */
export function withClaim(run: RunRecord, owner: string, now: number): RunRecord | undefined {
  if (run.status !== "waiting_approval") return undefined;
  const next = structuredClone(run);
  next.status = "running";
  next.owner = owner;
  next.claimedAt = now;
  next.updatedAt = now;
  return next;
}
