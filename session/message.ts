/**
 * Branch messages: `MessageInit`, `Message`, and the conversions to a stored `MessageRecord`.
 *
 * @module
 */

import { toJsonSafe } from "../core/json_safe.ts";
import { MESSAGE_ROLES, type MessageRecord, type MessageRole } from "../store/session_store.ts";

export { MESSAGE_ROLES };
export type { MessageRole };

/**
 * What a message is made from. `action_request` content is `{ function, arguments, callId }`;
 * `action_response` content is `{ function, arguments, output, callId }`.
 */
export interface MessageInit {
  /** Who wrote it. */
  role: MessageRole;
  /** The content (any value; stored JSON-safe). */
  content: unknown;
  /** The sender, or `null`. */
  sender?: string | null;
  /** The recipient, or `null`. */
  recipient?: string | null;
}

/** A message in a branch: frozen, with an id, a creation time and its branch. */
export interface Message extends MessageInit {
  /** A UUID. */
  readonly id: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  /** The branch it was added to, or `null`. */
  readonly branchId: string | null;
  /** Who wrote it. */
  readonly role: MessageRole;
  /** The content. */
  readonly content: unknown;
  /** The sender, or `null`. */
  readonly sender: string | null;
  /** The recipient, or `null`. */
  readonly recipient: string | null;
}

function fail(reason: string): never {
  throw new TypeError(`Cannot create message: ${reason}`);
}

function optionalString(value: unknown, key: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") fail(`${key} must be a string or null; got ${typeof value}`);
  return value;
}

/**
 * Makes a frozen {@linkcode Message} from an init, validating the role and, for action messages,
 * the content shape (`function` a non-empty string, `arguments` an object when present).
 *
 * @example
 * ```ts
 * import { createMessage } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const message = createMessage({ role: "user", content: "hi" }, "b1");
 * assert.equal(message.branchId, "b1");
 * assert.equal(message.sender, null);
 * assert.ok(Object.isFrozen(message));
 * assert.throws(() => createMessage({ role: "robot" as never, content: "" }), TypeError);
 * ```
 */
export function createMessage(
  init: MessageInit,
  branchId: string | null = null,
  options?: { id?: string; createdAt?: number },
): Message {
  if (init === null || typeof init !== "object") fail("init must be an object");
  const role = init.role;
  if (!MESSAGE_ROLES.includes(role)) {
    fail(
      `unknown role ${typeof role === "string" ? JSON.stringify(role) : `(${typeof role})`}; ` +
        `valid roles: ${MESSAGE_ROLES.map((r) => `"${r}"`).join(", ")}`,
    );
  }
  const content = init.content === undefined ? null : init.content;
  if (role === "action_request" || role === "action_response") {
    const c = content as Record<string, unknown> | null;
    if (c === null || typeof c !== "object" || Array.isArray(c)) {
      fail(`${role} content must be an object with "function" and "arguments"`);
    }
    if (typeof c.function !== "string" || c.function.length === 0) {
      fail(`${role} content needs "function", a non-empty string`);
    }
    const args = c.arguments;
    if (
      args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))
    ) {
      fail(`${role} content "arguments" must be an object`);
    }
  }
  const id = options?.id ?? crypto.randomUUID();
  if (typeof id !== "string" || id.length === 0) fail("id must be a non-empty string");
  const createdAt = options?.createdAt ?? Date.now();
  if (typeof createdAt !== "number" || !Number.isFinite(createdAt)) {
    fail("createdAt must be a finite number");
  }
  if (branchId !== null && typeof branchId !== "string") fail("branchId must be a string or null");
  return Object.freeze({
    id,
    role,
    content,
    sender: optionalString(init.sender, "sender"),
    recipient: optionalString(init.recipient, "recipient"),
    branchId,
    createdAt,
  });
}

/**
 * The stored form of a message: a {@linkcode MessageRecord} with JSON-safe content and the
 * session id.
 *
 * @example
 * ```ts
 * import { createMessage, toMessageRecord } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const message = createMessage({ role: "assistant", content: { n: 1n } }, "b1");
 * const record = toMessageRecord(message, "s1");
 * assert.deepEqual(record.content, { n: "1n" });
 * assert.equal(record.sessionId, "s1");
 * ```
 */
export function toMessageRecord(message: Message, sessionId: string | null): MessageRecord {
  return {
    id: message.id,
    role: message.role,
    content: toJsonSafe(message.content),
    sender: message.sender ?? null,
    recipient: message.recipient ?? null,
    branchId: message.branchId ?? null,
    sessionId,
    createdAt: message.createdAt,
  };
}
