// `hookscope show`'s timeline: messages and signals in one order, each message once (its
// MessageAdded signal is folded into the message's own row, as the console does).

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { buildTimeline } from "../../cli/show.ts";
import type { MessageRecord, SignalRow } from "../../store/session_store.ts";

function message(id: string, role: MessageRecord["role"], content: string, at: number) {
  return {
    id,
    role,
    content,
    sender: null,
    recipient: null,
    branchId: null,
    createdAt: at,
  } as unknown as MessageRecord;
}

function signal(seq: number, kind: string, payload: Record<string, unknown>, ts: number) {
  return { seq, sessionId: "s", kind, opId: "", ts, payload } as SignalRow;
}

describe("hookscope show timeline", () => {
  it("says which point a shadow verdict came from (tool.pre or tool.effects)", () => {
    const timeline = buildTimeline([], [
      signal(1, "WouldDeny", {
        data: { callId: "c1", toolName: "bash", hook: "h", reason: "no", point: "tool.pre" },
      }, 1),
      signal(2, "WouldAsk", {
        data: { callId: "c2", toolName: "bash", hook: "e", point: "tool.effects" },
      }, 2),
      // Recorded before the point was: no point to name.
      signal(3, "WouldDeny", { data: { callId: "c3", toolName: "bash" } }, 3),
    ]);
    assert.deepEqual(timeline.map((e) => e.detail), [
      "would deny (shadow, tool.pre) bash call c1 by h: no",
      "would ask (shadow, tool.effects) bash call c2 by e",
      "would deny (shadow) bash call c3",
    ]);
  });

  it("prints each stored message once: its MessageAdded signal adds no row", () => {
    const timeline = buildTimeline(
      [message("m1", "user", "hello", 1), message("m2", "assistant", "hi", 3)],
      [
        signal(1, "MessageAdded", { messageRef: { id: "m1", role: "user" } }, 1),
        signal(2, "ToolDenied", { data: { toolName: "bash", reason: "no" } }, 2),
        signal(3, "MessageAdded", { messageRef: { id: "m2", role: "assistant" } }, 3),
        // A message the store does not hold (a branch not persisted): its signal stays.
        signal(4, "MessageAdded", { messageRef: { id: "m9", role: "user" } }, 4),
      ],
    );
    assert.deepEqual(timeline.map((e) => [e.source, e.kind, e.detail]), [
      ["message", "user", "hello"],
      ["signal", "ToolDenied", "DENIED bash: no"],
      ["message", "assistant", "hi"],
      ["signal", "MessageAdded", "message user m9"],
    ]);
  });
});
