/**
 * `Session`: owns branches, one lazy `SessionObserver` and one lazy `HookBus`.
 *
 * @module
 */

import { reportFailure } from "./_loud_failures.ts";
import { Entity } from "../core/entity.ts";
import { abortable } from "../core/_async.ts";
import { BranchOwnershipError } from "../core/errors.ts";
import {
  type AgentHooks,
  buildSessionBus,
  type EmitOptions,
  type HookBus,
  type HookPayloads,
  type HookPoint,
  loadHooksForAgent,
} from "../hooks/mod.ts";
import type { IModel } from "../service/mod.ts";
import { StoreConflictError } from "../store/store_errors.ts";
import type { SessionStore } from "../store/session_store.ts";
import { attachBranch } from "./_attach.ts";
import { DEFAULT_HOOKS } from "./persist_handlers.ts";
import { Branch, type BranchOptions } from "./branch.ts";
import { bridgeModelToSession, type BridgeOptions, type ModelBridge } from "./bridge.ts";
import { type Gate, type ObserverHandler, type ObserveSpec, SessionObserver } from "./observer.ts";
import type { ApprovalAnswer } from "../core/approval.ts";
import type { OperateResult } from "./agent_loop.ts";
import { type RestoreOptions, restoreSession } from "./restore.ts";
import { type ResumeOptions, resumeRun } from "./resume.ts";

/** What a {@linkcode Session} is made from. */
export interface SessionOptions {
  /** Declarative hook overrides passed to `buildSessionBus`; validated at construction. */
  hooks?: AgentHooks;
  /**
   * Where the session persists. With a store the observer and the bus are created at once: the
   * observer persists every signal, and the bus's default handlers write sessions, branches and
   * messages.
   */
  store?: SessionStore;
  /**
   * The default branch's model. Its calls are emitted on the session bus as the `api.*` hook
   * points (see `bridgeModel`), so the bus is made at construction.
   */
  model?: IModel;
  /**
   * Whether `model`'s calls are emitted on the session bus as `api.pre_call`, `api.post_call`
   * and `api.stream_chunk` (default `true`; an object gives the bridge's options, such as
   * `{ chunks: false }`). `false` leaves the model unobserved.
   */
  bridgeModel?: boolean | BridgeOptions;
  /** A name. */
  name?: string;
  /** A fixed id (a UUID when absent). */
  id?: string;
  /**
   * Where isolated failures go: observer subscribers, routes, gates and persistence, and hook
   * handlers (`where` is `"hook <point>"`). Defaults to the library logger.
   */
  onError?: (error: unknown, where: string) => void;
  /** The observer's `maxEvents` bound. */
  maxEvents?: number;
  /**
   * Whether to make the default branch at construction (default `true`). With `false` it is
   * made when `defaultBranch` is first read, unless a branch was included before.
   */
  defaultBranch?: boolean;
}

/**
 * Owns branches and the two Session-scope transports: the observer (recording and fan-out) and
 * the hook bus (ordered dispatch). Both are lazy and made once; with a store they are made at
 * construction so persistence never depends on access order.
 *
 * - Creating the bus attaches it to every branch already included; branches included later
 *   get it at inclusion. Order of access never changes delivery.
 * - The bus is `buildSessionBus(options.hooks, { observer, store, sessionId, defaults })` with
 *   the persistence handlers of `DEFAULT_HOOKS` as defaults.
 * - `includeBranches` checks the whole batch first: a branch another session owns throws
 *   `BranchOwnershipError` and nothing changes.
 * - With a `model`, the model's calls are emitted on the bus as the `api.*` hook points
 *   (`bridgeModel: false` opts out); `drainSignals()` waits for those emissions too.
 * - `defaultBranch` is never `null`: it is the first included branch still present, or a new
 *   branch (with the session's model) made and included when there is none.
 * - `start()` creates the session row if missing (status `created`) and emits `session.start`;
 *   `end()` emits `session.end`; `newBranch()` emits `branch.create`, then `message.add` for the
 *   system message the branch was made with (so it is persisted like every later message).
 *
 * @example A session with a store
 * ```ts
 * import { Session } from "@hookscope/core/session";
 * import { MemoryStore } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * const session = new Session({ store });
 * await session.start({ model: "m" });
 * await session.defaultBranch.addMessage({ role: "user", content: "hi" });
 * await session.end({ status: "completed" });
 * await session.drainSignals();
 * assert.equal((await store.getSession(session.id))?.status, "completed");
 * assert.equal((await store.listMessages({ sessionId: session.id }))[0].content, "hi");
 * assert.ok((await store.listSessionSignals(session.id)).length >= 3);
 * ```
 */
export class Session extends Entity {
  /** The store, or `undefined`. */
  readonly store: SessionStore | undefined;
  /** The name, or `null`. */
  readonly name: string | null;
  /** The model the default branch got, or `null`. */
  readonly model: IModel | null;
  #agentHooks: AgentHooks | undefined;
  #onError: ((error: unknown, where: string) => void) | undefined;
  #maxEvents: number | undefined;
  #observer: SessionObserver | null = null;
  #bus: HookBus | null = null;
  #branches: Branch[] = [];
  #default: Branch | null = null;
  #pending = new Set<Promise<unknown>>();
  #bridge: ModelBridge | null = null;

  /** Makes a session; bad options throw before anything is made. */
  constructor(options?: SessionOptions) {
    if (options !== undefined && (options === null || typeof options !== "object")) {
      throw new TypeError("Cannot create session: options must be an object");
    }
    const store = options?.store;
    if (
      store !== undefined &&
      (store === null || typeof store !== "object" ||
        typeof (store as { insertSessionSignal?: unknown }).insertSessionSignal !== "function")
    ) {
      throw new TypeError("Cannot create session: store must be a SessionStore");
    }
    const bridgeModel = options?.bridgeModel;
    if (
      bridgeModel !== undefined && typeof bridgeModel !== "boolean" &&
      (bridgeModel === null || typeof bridgeModel !== "object")
    ) {
      throw new TypeError("Cannot create session: bridgeModel must be a boolean or an object");
    }
    const model = options?.model;
    if (
      model !== undefined &&
      (model === null || typeof model !== "object" || typeof model.observe !== "function")
    ) {
      throw new TypeError("Cannot create session: model must be an IModel");
    }
    if (options?.onError !== undefined && typeof options.onError !== "function") {
      throw new TypeError("Cannot create session: onError must be a function");
    }
    if (options?.name !== undefined && typeof options.name !== "string") {
      throw new TypeError("Cannot create session: name must be a string");
    }
    loadHooksForAgent(options?.hooks); // validates the declarative config now
    super(options?.id === undefined ? undefined : { id: options.id });
    this.store = store;
    this.name = options?.name ?? null;
    this.model = options?.model ?? null;
    this.#agentHooks = options?.hooks;
    this.#onError = options?.onError;
    this.#maxEvents = options?.maxEvents;
    if (store !== undefined) void this.hooks; // observer (persisting) and bus, now
    else if (options?.maxEvents !== undefined) void this.observer; // validate maxEvents now
    if (model !== undefined && bridgeModel !== false) {
      this.#bridge = bridgeModelToSession(
        model,
        this,
        typeof bridgeModel === "object" ? bridgeModel : undefined,
      );
    }
    if (options?.defaultBranch !== false) this.#makeDefaultBranch();
  }

  /** The session's observer: made on first access (or at construction with a store), then the same. */
  get observer(): SessionObserver {
    let observer = this.#observer;
    if (observer === null) {
      const init: ConstructorParameters<typeof SessionObserver>[0] = { session: this };
      if (this.#onError !== undefined) init.onError = this.#onError;
      if (this.#maxEvents !== undefined) init.maxEvents = this.#maxEvents;
      observer = new SessionObserver(init);
      if (this.store !== undefined) observer.bindDbPersistence(this.id, this.store);
      this.#observer = observer;
    }
    return observer;
  }

  /**
   * The session's bus: made on first access (or at construction with a store) with the
   * declarative overrides, the observer, the store and the session id, then attached to every
   * included branch.
   */
  get hooks(): HookBus {
    let bus = this.#bus;
    if (bus === null) {
      const onError = this.#onError;
      bus = buildSessionBus(this.#agentHooks, {
        observer: this.observer,
        ...(this.store !== undefined ? { store: this.store } : {}),
        sessionId: this.id,
        defaults: DEFAULT_HOOKS,
        ...(onError !== undefined
          ? {
            onError: (error: unknown, where: { point: HookPoint; stage: string }) =>
              onError(error, `hook ${where.point}${where.stage === "record" ? " record" : ""}`),
          }
          : {}),
      });
      this.#bus = bus;
      for (const branch of this.#branches) branch.bindHooks(bus); // backfill
    }
    return bus;
  }

  /** Whether the bus was made yet (reading `hooks` makes it). */
  get hasHooks(): boolean {
    return this.#bus !== null;
  }

  /** The included branches, in inclusion order (a copy). */
  get branches(): readonly Branch[] {
    return this.#branches.slice();
  }

  /**
   * The default branch: the first included branch still present; when there is none, a new
   * branch (with the session's model) is made and included.
   *
   * @example
   * ```ts
   * import { Session } from "@hookscope/core/session";
   * import assert from "node:assert/strict";
   *
   * const session = new Session({ defaultBranch: false });
   * assert.equal(session.branches.length, 0);
   * const branch = session.defaultBranch; // made now
   * assert.deepEqual(session.branches, [branch]);
   * assert.equal(session.defaultBranch, branch);
   * ```
   */
  get defaultBranch(): Branch {
    return this.#default ?? this.#makeDefaultBranch();
  }

  #makeDefaultBranch(): Branch {
    const init: BranchOptions = {};
    if (this.model !== null) init.model = this.model;
    const branch = new Branch(init);
    this.includeBranches(branch);
    return branch;
  }

  /**
   * Rebuilds a session from its store: branches and messages come back as stored, nothing is
   * written again (see {@linkcode restoreSession}).
   *
   * @example
   * ```ts
   * import { MemoryStore } from "@hookscope/core";
   * import { Session } from "@hookscope/core/session";
   * import assert from "node:assert/strict";
   *
   * const store = new MemoryStore();
   * const first = new Session({ store });
   * await first.start();
   * await first.defaultBranch.addMessage({ role: "user", content: "hi" });
   * const again = await Session.restore(store, first.id);
   * assert.equal(again.branches[0].messages[0].content, "hi");
   * ```
   */
  static restore(
    store: SessionStore,
    sessionId: string,
    options?: RestoreOptions,
  ): Promise<Session> {
    return restoreSession(this, store, sessionId, options);
  }

  /**
   * Continues a run that stopped for approval exactly where it stopped, once, even when another
   * process resumes it at the same time (see {@linkcode resumeRun}).
   *
   * @example An unknown run
   * ```ts
   * import { RunNotResumableError, Session } from "@hookscope/core/session";
   * import assert from "node:assert/strict";
   *
   * await assert.rejects(new Session().resume("nope", {}), RunNotResumableError);
   * ```
   */
  resume(
    runId: string,
    answers: Readonly<Record<string, ApprovalAnswer>>,
    options?: ResumeOptions,
  ): Promise<OperateResult> {
    return resumeRun(this, runId, answers, options);
  }

  /**
   * Makes a branch, includes it and emits `branch.create` with `{ branchId, model?, provider?,
   * agentName? }` (in the background; `drainSignals()` waits for it).
   *
   * @example
   * ```ts
   * import { Session } from "@hookscope/core/session";
   * import assert from "node:assert/strict";
   *
   * const session = new Session();
   * const created: unknown[] = [];
   * session.hooks.on("branch.create", (payload) => { created.push(payload.branchId); });
   * const branch = session.newBranch({ name: "researcher" });
   * await session.drainSignals();
   * assert.deepEqual(created, [branch.id]);
   * assert.equal(branch.session, session);
   * ```
   */
  newBranch(options?: BranchOptions): Branch {
    const branch = new Branch(options);
    this.includeBranches(branch);
    const payload: HookPayloads["branch.create"] = { branchId: branch.id };
    const model = branch.model as unknown as { model?: unknown; endpoint?: { name?: unknown } };
    if (model !== null && typeof model === "object") {
      if (typeof model.model === "string") payload.model = model.model;
      if (typeof model.endpoint?.name === "string") payload.provider = model.endpoint.name;
    }
    // The branch's name: the one given, else the spec's (`BranchOptions.name`).
    if (branch.name !== null) payload.agentName = branch.name;
    this.#track(this.hooks.emit("branch.create", payload));
    // The system message a branch is made with existed before the session owned it: emit it now
    // so that it is persisted like every later message.
    for (const message of branch.messages) this.#track(branch.persistViaBus(message));
    return branch;
  }

  /**
   * Includes branches (all or nothing): a branch owned by another session throws
   * {@linkcode BranchOwnershipError} and nothing changes; including a branch twice is a no-op.
   * Each gets the session, its observer and (if made) its bus; the first becomes the default.
   *
   * @example
   * ```ts
   * import { Branch, Session } from "@hookscope/core/session";
   * import { BranchOwnershipError } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * const a = new Session();
   * const b = new Session();
   * const branch = new Branch();
   * a.includeBranches(branch);
   * assert.throws(() => b.includeBranches([new Branch(), branch]), BranchOwnershipError);
   * assert.equal(b.branches.length, 1); // only its default branch
   * ```
   */
  includeBranches(branches: Branch | readonly Branch[]): void {
    const list: readonly Branch[] = Array.isArray(branches) ? branches : [branches as Branch];
    for (const branch of list) {
      if (!(branch instanceof Branch)) {
        throw new TypeError("Cannot include branches: every item must be a Branch");
      }
      const owner = branch.session;
      if (owner !== null && owner !== this) throw new BranchOwnershipError(branch.id, owner.id);
    }
    for (const branch of list) {
      if (!this.#branches.includes(branch)) this.#branches.push(branch);
      attachBranch(branch, this, this.observer);
      if (this.#bus !== null) branch.bindHooks(this.#bus);
      if (this.#default === null) this.#default = branch;
    }
  }

  /**
   * Detaches a branch (by object or id): its session, observer and bus are cleared, its messages
   * kept; the default moves to the first remaining branch (or is made again when next read). An
   * unknown branch throws a `RangeError`.
   *
   * @example
   * ```ts
   * import { Session } from "@hookscope/core/session";
   * import assert from "node:assert/strict";
   *
   * const session = new Session();
   * const branch = session.removeBranch(session.defaultBranch);
   * assert.equal(branch.session, null);
   * assert.equal(session.branches.length, 0);
   * ```
   */
  removeBranch(branch: Branch | string): Branch {
    const id = typeof branch === "string" ? branch : branch?.id;
    const index = this.#branches.findIndex((b) => b.id === id);
    if (index === -1) {
      throw new RangeError(
        `Cannot remove branch: unknown branch ${
          typeof id === "string" ? JSON.stringify(id) : `(${typeof id})`
        }`,
      );
    }
    const [removed] = this.#branches.splice(index, 1);
    attachBranch(removed, null, null);
    removed.bindHooks(null);
    if (this.#default === removed) this.#default = this.#branches[0] ?? null;
    return removed;
  }

  /**
   * Creates the session row if the store lacks it (status `created`), then emits
   * `session.start` with `{ ...meta, sessionId }`. A store failure is reported to `onError`,
   * never thrown. With `options.signal`, a pending handler is abandoned when it aborts (`start`
   * rejects with the reason).
   */
  async start(meta?: Record<string, unknown>, options?: EmitOptions): Promise<void> {
    const store = this.store;
    if (store !== undefined) {
      const signal = options?.signal;
      try {
        if ((await abortable(store.getSession(this.id), signal)) === undefined) {
          await abortable(store.createSession({ id: this.id, status: "created" }), signal);
        }
      } catch (error) {
        if (signal?.aborted && error === signal.reason) throw error;
        if (!(error instanceof StoreConflictError)) this.#report(error, "store");
      }
    }
    await this.hooks.emit("session.start", { ...(meta ?? {}), sessionId: this.id }, options);
  }

  /**
   * Emits `session.end` with `{ ...result, sessionId }`. With `options.signal`, a pending handler
   * is abandoned when it aborts (`end` rejects with the reason).
   */
  async end(
    result?: { status?: string; error?: string } & Record<string, unknown>,
    options?: EmitOptions,
  ): Promise<void> {
    await this.hooks.emit("session.end", { ...(result ?? {}), sessionId: this.id }, options);
  }

  /** Subscribes on the observer; see `SessionObserver.observe`. */
  observe<T>(spec: ObserveSpec<T>, handler: ObserverHandler<T>): () => number {
    return this.observer.observe(spec, handler);
  }

  /** Adds a route on the observer; chainable. */
  route(condition: (payload: unknown) => boolean, options: { into: string }): this {
    this.observer.route(condition, options);
    return this;
  }

  /** Sets the observer's gate; chainable. */
  gate(check: Gate | null): this {
    this.observer.gate(check);
    return this;
  }

  /** Emits on the observer. */
  emit(event: unknown): Promise<unknown[]> {
    return this.observer.emit(event);
  }

  /** Asks the observer's gate. */
  authorize(action: unknown): Promise<boolean> {
    return this.observer.authorize(action);
  }

  /**
   * Waits for background emissions: `branch.create`, every branch's `MessageAdded`, and the
   * model's `api.*` points.
   */
  async drainSignals(): Promise<void> {
    if (this.#bridge !== null) await this.#bridge.drain();
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    for (const branch of this.#branches) await branch.drainSignals();
  }

  #track(promise: Promise<unknown>): void {
    this.#pending.add(promise);
    const settle = () => {
      this.#pending.delete(promise);
    };
    promise.then(settle, settle);
  }

  #report(error: unknown, where: string): void {
    try {
      (this.#onError ?? defaultReport)(error, where);
    } catch {
      // A failing reporter must not break the session.
    }
  }
}

function defaultReport(error: unknown, where: string): void {
  reportFailure("Session", error, where);
}
