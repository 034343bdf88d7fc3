// Operation creation for IModel (private): the pre-create hook, the event, and its invocation hooks.

import { HookPhaseError } from "../core/mod.ts";
import { APICalling } from "./api_calling.ts";
import type { Endpoint } from "./endpoint.ts";
import { HookEventType } from "./hook_event_type.ts";
import { HookEvent } from "./hook_event.ts";
import { HookedEvent } from "./hooked_event.ts";
import { globalHookLogger } from "./hook_logger.ts";
import type { HookedEventClass, HookRegistry } from "./hook_registry.ts";
import {
  type CreateEventOptions,
  DEFAULT_CREATE_EVENT_HOOK_TIMEOUT_MS,
  DEFAULT_INVOKE_HOOK_TIMEOUT_MS,
} from "./model_options.ts";
import { validateCreateEventOptions } from "./_model_options.ts";
import { hookRuns } from "./_hook_run.ts";
import { INTERNALS } from "./_dispatch.ts";
import { PhaseRun } from "./_phase_run.ts";

/** What event creation needs from a model. */
export interface EventFactoryModel {
  readonly model: string;
  readonly endpoint: Endpoint;
  readonly hookRegistry: HookRegistry;
  readonly exitHook: boolean;
}

/**
 * `IModel.createEvent`: see its documentation. Synchronous (returns the event) unless a
 * pre-create handler is registered; throws (or rejects) what `createEvent` rejects with.
 */
export function createModelEvent(
  model: EventFactoryModel,
  request: Record<string, unknown>,
  options?: CreateEventOptions,
): APICalling | Promise<APICalling> {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    throw new TypeError(`Cannot create event: request must be an object`);
  }
  const opts = options ?? NO_OPTIONS;
  if (options !== undefined) validateCreateEventOptions(opts);
  const registry = model.hookRegistry;
  if (hasPhase(registry, HookEventType.PreEventCreate)) {
    return createAfterPreCreate(model, request, opts);
  }
  const eventType = (opts.eventType ?? APICalling) as HookedEventClass;
  return buildEvent(model, request, opts, eventType, null);
}

const NO_OPTIONS: CreateEventOptions = Object.freeze({});

async function createAfterPreCreate(
  model: EventFactoryModel,
  request: Record<string, unknown>,
  opts: CreateEventOptions,
): Promise<APICalling> {
  const eventType = (opts.eventType ?? APICalling) as HookedEventClass;
  const registry = model.hookRegistry;
  const preCreate = new HookEvent({
    registry,
    hookType: HookEventType.PreEventCreate,
    eventLike: eventType,
    exit: opts.createEventExitHook ?? model.exitHook,
    timeoutMs: opts.createEventHookTimeoutMs ?? DEFAULT_CREATE_EVENT_HOOK_TIMEOUT_MS,
    params: opts.createEventHookParams ?? {},
  });
  try {
    await preCreate.invoke({ signal: opts.signal });
  } catch (error) {
    globalHookLogger.log(preCreate.toJSON());
    throw error;
  }
  if (preCreate.shouldExit) {
    globalHookLogger.log(preCreate.toJSON());
    throw preCreate.exitCause ??
      new HookPhaseError("PreEventCreate hook requested exit without a cause");
  }
  return buildEvent(model, request, opts, eventType, preCreate);
}

function buildEvent(
  model: EventFactoryModel,
  request: Record<string, unknown>,
  opts: CreateEventOptions,
  eventType: HookedEventClass,
  preCreate: HookEvent | null,
): APICalling {
  const registry = model.hookRegistry;
  if (
    typeof eventType !== "function" ||
    // HookedEvent itself is abstract: it has no core to run.
    !(eventType.prototype instanceof HookedEvent)
  ) {
    if (preCreate) globalHookLogger.log(preCreate.toJSON());
    throw new TypeError(
      `Cannot create event: unsupported event type ${
        typeof eventType === "function" ? JSON.stringify(eventType.name) : `(${typeof eventType})`
      }; only HookedEvent subclasses such as APICalling are supported`,
    );
  }
  const event = new eventType({
    endpoint: model.endpoint,
    payload: { ...request, model: request.model ?? model.model },
  });
  if (preCreate) {
    preCreate.associatedEventInfo = {
      ...preCreate.associatedEventInfo,
      eventClass: event.constructor.name,
      eventId: event.id,
      eventCreatedAt: event.createdAt,
    };
    globalHookLogger.log(preCreate.toJSON());
  }
  // The phase hooks run on their run states; their HookEvents are made only when read. They
  // share the event's creation time (made in the same instant). A subclass that makes its own
  // hooks gets them made its way.
  let pre: PhaseRun | null = null;
  let post: PhaseRun | null = null;
  const plain = event.createPreInvokeHook === HookedEvent.prototype.createPreInvokeHook &&
    event.createPostInvokeHook === HookedEvent.prototype.createPostInvokeHook;
  if (hasPhase(registry, HookEventType.PreInvocation)) {
    const exit = opts.preInvokeExitHook ?? model.exitHook;
    const timeoutMs = opts.preInvokeHookTimeoutMs ?? DEFAULT_INVOKE_HOOK_TIMEOUT_MS;
    const params = opts.preInvokeHookParams;
    if (plain) {
      pre = phaseRun(event, registry, HookEventType.PreInvocation, exit, timeoutMs, params);
    } else event.createPreInvokeHook(registry, { exit, timeoutMs, params: params ?? {} });
  }
  if (hasPhase(registry, HookEventType.PostInvocation)) {
    const exit = opts.postInvokeExitHook ?? model.exitHook;
    const timeoutMs = opts.postInvokeHookTimeoutMs ?? DEFAULT_INVOKE_HOOK_TIMEOUT_MS;
    const params = opts.postInvokeHookParams;
    if (plain) {
      post = phaseRun(event, registry, HookEventType.PostInvocation, exit, timeoutMs, params);
    } else event.createPostInvokeHook(registry, { exit, timeoutMs, params: params ?? {} });
  }
  if (plain && (pre !== null || post !== null)) hookRuns.attach!(event, pre, post);
  return event as APICalling;
}

/** `registry.canHandle({ hookType })` without building the key (the registry's own map). */
function hasPhase(registry: HookRegistry, type: HookEventType): boolean {
  const hooks = INTERNALS.get(registry)?.hooks;
  return hooks !== undefined ? hooks.has(type) : registry.canHandle({ hookType: type });
}

function phaseRun(
  event: HookedEvent,
  registry: HookRegistry,
  hookType: HookEventType,
  exit: boolean,
  timeoutMs: number,
  params: Record<string, unknown> | undefined,
): PhaseRun {
  return new PhaseRun(
    {
      registry,
      hookType,
      eventLike: event,
      exit,
      timeoutMs,
      params: { ...params },
      createdAt: event.createdAt,
    },
    null,
    null,
  );
}
