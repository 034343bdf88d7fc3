/**
 * `Branch`: one conversation thread: its messages, its tools and, once a Session includes it,
 * the session's observer and hook bus.
 *
 * @module
 */

import { Entity } from "../core/entity.ts";
import { ActionManager, AgentSpec, type Tool } from "../action/mod.ts";
import type { EmitOptions, HookBus } from "../hooks/mod.ts";
import { EMIT_RESULTS, type WithResultSink } from "../hooks/_emit_results.ts";
import { abortable } from "../core/_async.ts";
import { isThenable } from "../core/_util.ts";
import type { IModel } from "../service/mod.ts";
import { registerAttacher } from "./_attach.ts";
import { registerHistory } from "./_history.ts";
import { createMessage, type Message, type MessageInit, toMessageRecord } from "./message.ts";
import type { SessionObserver } from "./observer.ts";
import type { Session } from "./session.ts";
import { MessageAdded } from "./signal.ts";
import type { ActionRequestInit } from "../action/mod.ts";
import { act, actAll, type ActAllOptions, type ActionResult, type ActOptions } from "./act.ts";
import {
  type AgentRunOptions,
  type AgentStreamEvent,
  chat,
  operate,
  type OperateResult,
  operateStream,
} from "./agent_loop.ts";

/** What a {@linkcode Branch} is made from. */
export interface BranchOptions {
  /** The model the branch talks to. */
  model?: IModel;
  /** Tools registered on the branch's {@linkcode ActionManager}. */
  tools?: readonly Tool[];
  /** A system message added first (synchronously, before any callback exists). */
  system?: string;
  /** A name (also the `agentName` of `branch.create`); default: the spec's name, if any. */
  name?: string;
  /**
   * The agent spec: every tool registered on the branch, now or later, gets its security pre
   * hooks, pre/post hooks and error hooks (this is how an agent is made from a spec).
   */
  spec?: AgentSpec;
  /** A fixed id (a UUID when absent). */
  id?: string;
}

/** A callback run after a message was added. */
export type MessageCallback = (message: Message, options?: AddMessageOptions) => unknown;

/** Options of {@linkcode Branch.addMessage}. */
export interface AddMessageOptions {
  /**
   * Stops waiting for the message callbacks (`message.add` handlers among them) when it aborts;
   * the message itself is already stored by then. `addMessage` rejects with the abort reason.
   */
  signal?: AbortSignal;
}

const NO_EMIT_OPTIONS: EmitOptions = Object.freeze({});

/**
 * A conversation thread. Standalone, `emit` resolves to `[]` and `authorize` to `true`; once a
 * Session includes it, both go to the session's observer, and `hooks` is the session's bus.
 *
 * `addMessage` is async only: the message is stored, then the message callbacks run in
 * registration order (async ones awaited one after another); their failures are collected and
 * thrown together after all ran (one as-is, several as an `AggregateError`). The first two
 * callbacks are built in: one emits {@linkcode MessageAdded} to the observer (in the background;
 * `drainSignals()` waits for it), the other, {@linkcode Branch.persistViaBus}, emits `message.add`
 * with `{ sessionId, branchId, message }` (a `MessageRecord`) on the bus when there is one.
 *
 * @example Messages on a standalone branch
 * ```ts
 * import { Branch } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const branch = new Branch({ system: "be brief" });
 * const seen: string[] = [];
 * branch.onMessageAdded((message) => { seen.push(message.role); });
 * await branch.addMessage({ role: "user", content: "hi" });
 * assert.deepEqual(branch.messages.map((m) => m.role), ["system", "user"]);
 * assert.deepEqual(seen, ["user"]);
 * assert.deepEqual(await branch.emit("x"), []);
 * assert.equal(await branch.authorize("anything"), true);
 * ```
 *
 * @example An agent made from a spec, in a session
 * ```ts
 * import { Session } from "@hookscope/core/session";
 * import { AgentSpec, Tool } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec({ name: "adder" }).post("add", ({ result }) => ({
 *   updatedResult: Number(result) * 10,
 * }));
 * const session = new Session();
 * const agent = session.newBranch({ spec });
 * agent.actions.register(new Tool({ name: "add", execute: (a: Record<string, unknown>) => Number(a.x) + 1 }));
 * const result = await agent.act({ function: "add", arguments: { x: 1 } });
 * assert.equal(result.output, 20);
 * assert.equal(agent.name, "adder");
 * ```
 */
export class Branch extends Entity {
  /** The model, or `null`. */
  readonly model: IModel | null;
  /** The name, or `null`. */
  readonly name: string | null;
  /** The branch's tools. */
  readonly actions: ActionManager;
  #session: Session | null = null;
  #observer: SessionObserver | null = null;
  #hooks: HookBus | null = null;
  #messages: Message[] = [];
  #callbacks: readonly MessageCallback[];
  #pending = new Set<Promise<unknown>>();

  /**
   * Emits `message.add` for a message on the branch's bus (a no-op without a bus). It is one of
   * the built-in message callbacks; `routeMessagePersistence` registers it once and
   * `unrouteMessagePersistence` removes it.
   */
  readonly persistViaBus: (message: Message, options?: AddMessageOptions) => Promise<void>;

  /** Makes a branch; bad options throw a `TypeError`. */
  constructor(options?: BranchOptions) {
    if (options !== undefined && (options === null || typeof options !== "object")) {
      throw new TypeError("Cannot create branch: options must be an object");
    }
    const spec = options?.spec;
    if (spec !== undefined && !(spec instanceof AgentSpec)) {
      throw new TypeError("Cannot create branch: spec must be an AgentSpec");
    }
    const name = options?.name ?? spec?.name;
    if (name !== undefined && typeof name !== "string") {
      throw new TypeError("Cannot create branch: name must be a string");
    }
    const system = options?.system;
    if (system !== undefined && typeof system !== "string") {
      throw new TypeError("Cannot create branch: system must be a string");
    }
    super(options?.id === undefined ? undefined : { id: options.id });
    this.model = options?.model ?? null;
    this.name = name ?? null;
    this.actions = new ActionManager(spec ? { spec } : undefined);
    for (const tool of options?.tools ?? []) this.actions.register(tool);
    if (system !== undefined) {
      this.#messages.push(createMessage({ role: "system", content: system }, this.id));
    }
    const scheduleEmit: MessageCallback = (message) => {
      const observer = this.#observer;
      if (observer === null) return;
      const emitted = observer.emit(new MessageAdded({ data: message }));
      this.#pending.add(emitted);
      const settle = () => {
        this.#pending.delete(emitted);
      };
      emitted.then(settle, settle);
    };
    this.persistViaBus = async (message: Message, options?: AddMessageOptions): Promise<void> => {
      const bus = this.#hooks;
      if (bus === null) return;
      const sessionId = this.#session?.id ?? bus.context.sessionId ?? null;
      const payload: {
        branchId: string;
        message: ReturnType<typeof toMessageRecord>;
        sessionId?: string;
      } = {
        branchId: this.id,
        message: toMessageRecord(message, sessionId),
      };
      if (sessionId !== null) payload.sessionId = sessionId;
      // Options make every pending handler race a deadline (30 s by default) and the signal.
      const sink = (options as WithResultSink | undefined)?.[EMIT_RESULTS];
      await bus.emit(
        "message.add",
        payload,
        sink !== undefined
          ? { signal: options?.signal, [EMIT_RESULTS]: sink } as EmitOptions
          : options?.signal === undefined
          ? NO_EMIT_OPTIONS
          : { signal: options.signal },
      );
    };
    this.#callbacks = [scheduleEmit, this.persistViaBus];
    registerHistory(this, (messages) => void this.#messages.push(...messages));
    registerAttacher(this, (session, observer) => {
      this.#session = session;
      this.#observer = observer;
    });
  }

  /** The owning session, or `null`. */
  get session(): Session | null {
    return this.#session;
  }

  /** The session's observer, or `null` when standalone. */
  get observer(): SessionObserver | null {
    return this.#observer;
  }

  /** The hook bus `message.add` goes to, or `null`. */
  get hooks(): HookBus | null {
    return this.#hooks;
  }

  /**
   * Sets (or with `null` clears) the bus this branch emits `message.add` on. A Session does it
   * for the branches it includes; `routeMessagePersistence` does it too. Chainable.
   */
  bindHooks(bus: HookBus | null): this {
    if (bus !== null && (typeof bus !== "object" || typeof bus.emit !== "function")) {
      throw new TypeError("Cannot bind hooks: bus must be a HookBus or null");
    }
    this.#hooks = bus;
    return this;
  }

  /** The messages in the order they were added (a copy). */
  get messages(): readonly Message[] {
    return this.#messages.slice();
  }

  /** The message callbacks in the order they run (a copy). */
  get messageCallbacks(): readonly MessageCallback[] {
    return this.#callbacks.slice();
  }

  /**
   * Stores a message, then runs the message callbacks in order; resolves to the message. A bad
   * init rejects with a `TypeError` and adds nothing.
   *
   * Concurrent calls add their messages in call order, and with the default handlers the store
   * receives them in that order too. Their callbacks and `message.add` chains interleave, though:
   * an async `message.add` handler registered ahead of `persistMessage` (or an async routed
   * callback) can persist concurrent messages out of order. Await each call when the stored
   * order must match in that setup.
   */
  async addMessage(init: MessageInit, options?: AddMessageOptions): Promise<Message> {
    const message = createMessage(init, this.id);
    this.#messages.push(message);
    const callbacks = this.#callbacks;
    const signal = options?.signal;
    let errors: unknown[] | null = null;
    for (let i = 0; i < callbacks.length; i++) {
      try {
        const result = callbacks[i](message, options);
        if (isThenable(result)) {
          await abortable(result, signal);
        }
      } catch (error) {
        if (signal?.aborted && error === signal.reason) throw error;
        (errors ??= []).push(error);
      }
    }
    if (errors !== null) {
      if (errors.length === 1) throw errors[0];
      throw new AggregateError(errors, `${errors.length} message callbacks failed`);
    }
    return message;
  }

  /**
   * Adds a message callback (after the existing ones); returns a disposer for this registration.
   *
   * @example
   * ```ts
   * import { Branch } from "@hookscope/core/session";
   * import assert from "node:assert/strict";
   *
   * const branch = new Branch();
   * let count = 0;
   * const dispose = branch.onMessageAdded(async () => { count++; });
   * await branch.addMessage({ role: "user", content: "a" });
   * dispose();
   * await branch.addMessage({ role: "user", content: "b" });
   * assert.equal(count, 1);
   * ```
   */
  onMessageAdded(callback: MessageCallback): () => void {
    if (typeof callback !== "function") {
      throw new TypeError("Cannot add message callback: callback must be a function");
    }
    const entry: MessageCallback = callback;
    this.#callbacks = [...this.#callbacks, entry];
    let disposed = false;
    return () => {
      if (disposed) return;
      disposed = true;
      const index = this.#callbacks.indexOf(entry);
      if (index === -1) return;
      const next = this.#callbacks.slice();
      next.splice(index, 1);
      this.#callbacks = next;
    };
  }

  /** Removes every registration of a message callback; returns how many were removed. */
  offMessageAdded(callback: MessageCallback): number {
    const next = this.#callbacks.filter((c) => c !== callback);
    const removed = this.#callbacks.length - next.length;
    if (removed > 0) this.#callbacks = next;
    return removed;
  }

  /** Emits to the session's observer; resolves to `[]` when standalone. */
  emit(event: unknown): Promise<unknown[]> {
    const observer = this.#observer;
    return observer === null ? Promise.resolve([]) : observer.emit(event);
  }

  /** Asks the session's gate; resolves to `true` when standalone. */
  authorize(
    action: unknown,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<boolean> {
    const observer = this.#observer;
    return observer === null ? Promise.resolve(true) : observer.authorize(action, options);
  }

  /**
   * Runs one tool action in the documented order (see {@linkcode act}): gate → `tool.pre` →
   * the tool with its processors → `tool.post` or `tool.error`.
   */
  act(request: ActionRequestInit, options?: ActOptions): Promise<ActionResult> {
    return act(this, request, options);
  }

  /** Runs several actions, concurrently by default (see {@linkcode actAll}). */
  actAll(requests: readonly ActionRequestInit[], options?: ActAllOptions): Promise<ActionResult[]> {
    return actAll(this, requests, options);
  }

  /** One model turn: the instruction in, the assistant's answer out (see {@linkcode chat}). */
  chat(instruction: string, options?: AgentRunOptions): Promise<Message> {
    return chat(this, instruction, options);
  }

  /** The tool-calling loop, up to `maxTurns` (see {@linkcode operate}). */
  operate(instruction: string, options?: AgentRunOptions): Promise<OperateResult> {
    return operate(this, instruction, options);
  }

  /** The tool-calling loop as a stream of text, tool calls and results (see {@linkcode operateStream}). */
  operateStream(instruction: string, options?: AgentRunOptions): ReadableStream<AgentStreamEvent> {
    return operateStream(this, instruction, options);
  }

  /** Waits until every background `MessageAdded` emission has settled (failures are not raised). */
  async drainSignals(): Promise<void> {
    while (this.#pending.size > 0) {
      await Promise.allSettled([...this.#pending]);
    }
  }
}
