// Compile-time checks of the service scope's typed keys: checked by `deno check`, never run.
// Every `@ts-expect-error` line must be an error; if a type loosens, `deno check` fails here.

import {
  type APICalling,
  type ChunkOf,
  FunctionEndpoint,
  HookRegistry,
  IModel,
  loadPhaseHandlers,
  type StreamChunkType,
  type StreamHandler,
} from "../../service/mod.ts";

export function serviceTypos(): void {
  // Phase keys: the three canonical keys only; older spellings go through loadPhaseHandlers().
  new HookRegistry({
    hooks: { preInvoke: () => {}, postInvoke: () => {}, preEventCreate: () => {} },
  });
  new HookRegistry({ hooks: loadPhaseHandlers({ pre_invoke: () => {} }) });
  // @ts-expect-error an older spelling of preInvoke
  new HookRegistry({ hooks: { pre_invoke: () => {} } });
  // @ts-expect-error an older spelling of preInvoke (the phase value)
  new HookRegistry({ hooks: { pre_invocation: () => {} } });
  // @ts-expect-error an older spelling of preInvoke
  new HookRegistry({ hooks: { preInvocation: () => {} } });
  // @ts-expect-error an older spelling of postInvoke
  new HookRegistry({ hooks: { post_invoke: () => {} } });
  // @ts-expect-error an older spelling of postInvoke (the phase value)
  new HookRegistry({ hooks: { post_invocation: () => {} } });
  // @ts-expect-error an older spelling of postInvoke
  new HookRegistry({ hooks: { postInvocation: () => {} } });
  // @ts-expect-error an older spelling of preEventCreate (the phase value)
  new HookRegistry({ hooks: { pre_event_create: () => {} } });
  // @ts-expect-error an older spelling of preEventCreate
  new HookRegistry({ hooks: { pre_event_create_hook: () => {} } });
  // @ts-expect-error an older spelling of preEventCreate
  new HookRegistry({ hooks: { preEventCreateHook: () => {} } });
  new IModel({
    model: "m",
    endpoint: new FunctionEndpoint({ call: () => "ok" }),
    // @ts-expect-error an older spelling in a model's registry
    hookRegistry: { hooks: { pre_invoke: () => {} } },
  });
  // @ts-expect-error a hookType is a HookEventType value, not a phase key
  void new HookRegistry().call(null, { hookType: "preInvoke" });
  // @ts-expect-error a misspelled phase key
  new HookRegistry({ hooks: { pre_invok: () => {} } });
  // @ts-expect-error a misspelled camelCase phase key
  new HookRegistry({ hooks: { preInvok: () => {} } });
  // @ts-expect-error not a phase
  new HookRegistry({ hooks: { before_call: () => {} } });
  // @ts-expect-error a handler must be a function
  new HookRegistry({ hooks: { preInvoke: "log" } });

  // Stream chunk types: the StreamChunk `type` values only.
  new HookRegistry({ streamHandlers: { text: () => {}, tool_call: () => {} } });
  // @ts-expect-error a misspelled chunk type
  new HookRegistry({ streamHandlers: { txt: () => {} } });
  // @ts-expect-error a camelCase chunk type
  new HookRegistry({ streamHandlers: { toolCall: () => {} } });
  // @ts-expect-error a misspelled chunk type on onChunk
  new HookRegistry().onChunk("txt", () => {});
  // @ts-expect-error an empty chunk type
  new HookRegistry().onChunk("", () => {});
  // @ts-expect-error canHandle asks about a chunk type that does not exist
  new HookRegistry().canHandle({ chunkType: "txt" });

  // @ts-expect-error call() runs a chunk type that does not exist
  void new HookRegistry().call(null, { chunkType: "txt" });
  // @ts-expect-error call() runs a phase that does not exist
  void new HookRegistry().call(null, { hookType: "pre_invok" });

  // The phase handler's event is typed, not `unknown`.
  new HookRegistry({
    hooks: {
      preInvoke: (event) => {
        const payload: Record<string, unknown> = event.payload;
        // @ts-expect-error an APICalling has no `paylod`
        void event.paylod;
        return payload;
      },
      // The pre-create handler gets the event class.
      preEventCreate: (eventClass) => {
        const name: string = eventClass.name;
        // @ts-expect-error the class, not an event: it has no payload
        void eventClass.payload;
        return name;
      },
    },
  });
  new HookRegistry().postInvoke((event: APICalling) => event.status);
  // @ts-expect-error the event is not a string
  new HookRegistry().postInvoke((event: string) => event);

  // A stream handler is (chunk, ctx): the chunk is typed per chunk type, ctx names the type.
  new HookRegistry({
    streamHandlers: {
      text: (chunk, { chunkType, exit, signal }) => {
        const type: "text" = chunkType;
        return [chunk.text.toUpperCase(), type, exit, signal.aborted];
      },
      // @ts-expect-error a usage chunk has no text
      usage: (chunk) => chunk.text,
    },
  });
  new HookRegistry().onChunk("tool_call", (chunk) => chunk.arguments);
  // @ts-expect-error a tool-call chunk has no finishReason
  new HookRegistry().onChunk("tool_call", (chunk) => chunk.finishReason);
  // @ts-expect-error ctx.chunkType is the registered type, not another one
  new HookRegistry().onChunk("text", (_chunk, ctx) => ctx.chunkType === "usage");
  const typed: StreamHandler = (chunk, ctx) => [chunk, ctx.chunkType, ctx.exit, ctx.signal];
  void typed;

  // The positional shape before 0.3, (event, chunkType, chunk, params), no longer compiles.
  new HookRegistry({
    // @ts-expect-error three parameters: the old positional shape
    streamHandlers: { text: (_event, _type, chunk) => chunk },
  });
  // @ts-expect-error four parameters: the old positional shape
  new HookRegistry().onChunk("text", (_event, _type, _chunk, params) => params);
  // @ts-expect-error the old shape's first parameter was the (null) event
  new HookRegistry().onChunk("text", (event: null) => event);
  new IModel({
    model: "m",
    endpoint: new FunctionEndpoint({ call: () => "ok" }),
    // @ts-expect-error the old positional shape in a model's registry
    hookRegistry: { streamHandlers: { text: (_e, _t, chunk) => chunk } },
  });
  const chunkType: StreamChunkType = "done";
  const done: ChunkOf<"done"> = { type: "done", finishReason: null };
  void chunkType;
  void done;
  // @ts-expect-error not a chunk type
  const badType: StreamChunkType = "txt";
  void badType;

  // The same keys are checked when a model builds its registry.
  const endpoint = new FunctionEndpoint({ call: () => "ok" });
  new IModel({ model: "m", endpoint, hookRegistry: { hooks: { postInvoke: () => {} } } });
  // @ts-expect-error a misspelled phase key in a model's registry
  new IModel({ model: "m", endpoint, hookRegistry: { hooks: { post_invok: () => {} } } });
  // @ts-expect-error a misspelled chunk type in a model's registry
  new IModel({ model: "m", endpoint, hookRegistry: { streamHandlers: { txt: () => {} } } });
  // @ts-expect-error a misspelled model option
  new IModel({ model: "m", endpoint, hookRegistery: {} });
  // @ts-expect-error a misspelled call option
  void new IModel({ model: "m", endpoint }).invoke({}, { preInvokeTimeoutMs: 5 });
}
