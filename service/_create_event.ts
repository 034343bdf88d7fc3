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

/** What event creation needs from a model. */
export interface EventFactoryModel {
  readonly model: string;
  readonly endpoint: Endpoint;
  readonly hookRegistry: HookRegistry;
  readonly exitHook: boolean;
}

/** `IModel.createEvent`: see its documentation. */
export async function createModelEvent(
  model: EventFactoryModel,
  request: Record<string, unknown>,
  options?: CreateEventOptions,
): Promise<APICalling> {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    throw new TypeError(`Cannot create event: request must be an object`);
  }
  const opts = options ?? {};
  if (options !== undefined) validateCreateEventOptions(opts);
  const eventType = (opts.eventType ?? APICalling) as HookedEventClass;
  const registry = model.hookRegistry;
  let preCreate: HookEvent | null = null;
  if (registry.canHandle({ hookType: HookEventType.PreEventCreate })) {
    preCreate = new HookEvent({
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
  }
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
  if (registry.canHandle({ hookType: HookEventType.PreInvocation })) {
    event.createPreInvokeHook(registry, {
      exit: opts.preInvokeExitHook ?? model.exitHook,
      timeoutMs: opts.preInvokeHookTimeoutMs ?? DEFAULT_INVOKE_HOOK_TIMEOUT_MS,
      params: opts.preInvokeHookParams ?? {},
    });
  }
  if (registry.canHandle({ hookType: HookEventType.PostInvocation })) {
    event.createPostInvokeHook(registry, {
      exit: opts.postInvokeExitHook ?? model.exitHook,
      timeoutMs: opts.postInvokeHookTimeoutMs ?? DEFAULT_INVOKE_HOOK_TIMEOUT_MS,
      params: opts.postInvokeHookParams ?? {},
    });
  }
  return event as APICalling;
}
