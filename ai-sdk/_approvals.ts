/**
 * The AI SDK's tool-approval flow as `wrapTools` reads it: approval requests and answers found
 * in a conversation (`ModelMessage[]` given to a tool, or the prompt a model middleware sees),
 * and the wrapped tool sets of one session bus, so that the middleware can report rejections.
 *
 * @module
 */

/** One answer of the AI SDK approval flow, by tool-call id. */
export interface FlowAnswer {
  /** The call. */
  readonly toolCallId: string;
  /** Approved or not. */
  readonly approved: boolean;
  /** The rejection reason, when given. */
  readonly reason?: string;
  /** The input of the call the answer is for (the model's tool-call part), when found. */
  readonly input?: unknown;
  /** Whether the input was found. */
  readonly hasInput: boolean;
}

type Part = {
  type?: unknown;
  toolCallId?: unknown;
  approvalId?: unknown;
  approved?: unknown;
  reason?: unknown;
  input?: unknown;
  output?: unknown;
};

function partsOf(messages: unknown): Part[] {
  if (!Array.isArray(messages)) return [];
  const out: Part[] = [];
  for (const message of messages) {
    const content = (message as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      if (part !== null && typeof part === "object") out.push(part as Part);
    }
  }
  return out;
}

function parsedInput(input: unknown): unknown {
  if (typeof input !== "string") return input;
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

/**
 * The approval answers in a conversation: `tool-approval-response` parts matched to their
 * `tool-approval-request` (for the call id) and the call's `tool-call` part (for its input), and
 * `execution-denied` tool results (a rejection as the model's prompt carries it).
 */
export function flowAnswers(messages: unknown): Map<string, FlowAnswer> {
  const parts = partsOf(messages);
  const requests = new Map<string, string>(); // approvalId -> toolCallId
  const inputs = new Map<string, unknown>();
  for (const part of parts) {
    if (
      part.type === "tool-approval-request" && typeof part.approvalId === "string" &&
      typeof part.toolCallId === "string"
    ) {
      requests.set(part.approvalId, part.toolCallId);
    } else if (part.type === "tool-call" && typeof part.toolCallId === "string") {
      inputs.set(part.toolCallId, parsedInput(part.input));
    }
  }
  const answers = new Map<string, FlowAnswer>();
  const put = (toolCallId: string, approved: boolean, reason: unknown) => {
    answers.set(toolCallId, {
      toolCallId,
      approved,
      ...(typeof reason === "string" ? { reason } : {}),
      hasInput: inputs.has(toolCallId),
      ...(inputs.has(toolCallId) ? { input: inputs.get(toolCallId) } : {}),
    });
  };
  for (const part of parts) {
    if (part.type === "tool-approval-response" && typeof part.approvalId === "string") {
      const toolCallId = requests.get(part.approvalId);
      if (toolCallId !== undefined) put(toolCallId, part.approved === true, part.reason);
    } else if (part.type === "tool-result" && typeof part.toolCallId === "string") {
      const output = part.output as { type?: unknown; reason?: unknown } | null;
      if (output?.type === "execution-denied") put(part.toolCallId, false, output.reason);
    }
  }
  return answers;
}

/** A wrapped tool set as the middleware reaches it: it records the rejections it asked about. */
export interface ApprovalListener {
  /** Records the rejections among `answers` of calls this set asked about. */
  noteAnswers(answers: Map<string, FlowAnswer>): Promise<void>;
}

const listeners = new WeakMap<object, Set<ApprovalListener>>();

/** Registers a wrapped tool set under its session bus. */
export function listenForAnswers(bus: object, listener: ApprovalListener): void {
  let set = listeners.get(bus);
  if (set === undefined) listeners.set(bus, set = new Set());
  set.add(listener);
}

/** Gives the answers found in `messages` to every wrapped tool set of `bus`. */
export async function reportAnswers(bus: object, messages: unknown): Promise<void> {
  const set = listeners.get(bus);
  if (set === undefined || set.size === 0) return;
  const answers = flowAnswers(messages);
  if (answers.size === 0) return;
  for (const listener of set) await listener.noteAnswers(answers);
}
