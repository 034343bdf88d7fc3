// The parts of the AI SDK's language-model specification (V3) the middleware touches, declared
// structurally so the published types do not depend on @ai-sdk/provider's own (wide) surface.

/** Provider-specific metadata on a part. */
export type ProviderMetadata = Record<string, Record<string, unknown>>;

/** One part of a language model's stream (the specification's V3 stream parts). */
export type StreamPart =
  | { type: "stream-start"; warnings: unknown[] }
  | { type: "response-metadata"; id?: string; timestamp?: Date; modelId?: string }
  | { type: "text-start"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "text-delta"; id: string; delta: string; providerMetadata?: ProviderMetadata }
  | { type: "text-end"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-start"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-delta"; id: string; delta: string; providerMetadata?: ProviderMetadata }
  | { type: "reasoning-end"; id: string; providerMetadata?: ProviderMetadata }
  | { type: "tool-input-start"; id: string; toolName: string; providerMetadata?: ProviderMetadata }
  | { type: "tool-input-delta"; id: string; delta: string; providerMetadata?: ProviderMetadata }
  | { type: "tool-input-end"; id: string; providerMetadata?: ProviderMetadata }
  | {
    type: "tool-call";
    toolCallId: string;
    toolName: string;
    input: string;
    providerMetadata?: ProviderMetadata;
  }
  | { type: "tool-result"; toolCallId: string; toolName: string; result: unknown }
  | { type: "source"; sourceType: string; id: string; [key: string]: unknown }
  | { type: "file"; mediaType: string; data: unknown }
  | { type: "finish"; finishReason: unknown; usage: unknown; providerMetadata?: ProviderMetadata }
  | { type: "raw"; rawValue: unknown }
  | { type: "error"; error: unknown };

/** The options of one model call (`prompt`, `tools`, settings, …). */
export interface CallParams {
  /** The prompt: the messages sent to the model. */
  prompt: unknown;
  /** Every other option of the call. */
  [key: string]: unknown;
}

/** What a `generate` call returns (`content`, `finishReason`, `usage`, …). */
export interface GenerateResult {
  /** The generated content parts. */
  content: unknown[];
  /** Token usage. */
  usage?: unknown;
  /** Everything else the model returned. */
  [key: string]: unknown;
}

/** What a `stream` call returns: the stream and what the model said about it. */
export interface StreamResult {
  /** The parts ({@linkcode StreamPart}s, and any part type a newer specification adds). */
  stream: ReadableStream<unknown>;
  /** Everything else the model returned. */
  [key: string]: unknown;
}

/** The wrapped model, as the middleware sees it. */
export interface ModelInfo {
  /** The provider's name. */
  readonly provider: string;
  /** The model id. */
  readonly modelId: string;
}

/** The middleware specification versions: `"v3"` (`ai@6`) and `"v4"` (`ai@7`). */
export type MiddlewareSpecificationVersion = "v3" | "v4";

/**
 * An AI SDK language-model middleware (specification V3 or V4, which have the same shape), as
 * `wrapLanguageModel({ model, middleware })` takes it.
 */
export interface LanguageModelMiddleware<
  V extends MiddlewareSpecificationVersion = MiddlewareSpecificationVersion,
> {
  /** The specification this middleware implements. */
  readonly specificationVersion: V;
  /** Runs before each call; resolves to the options the model gets. */
  transformParams<P extends CallParams>(
    options: { type: "generate" | "stream"; params: P; model: ModelInfo },
  ): PromiseLike<P>;
  /** Wraps a `generate` call. */
  wrapGenerate<G extends GenerateResult, P extends CallParams>(
    options: {
      doGenerate: () => PromiseLike<G>;
      doStream: () => PromiseLike<unknown>;
      params: P;
      model: ModelInfo;
    },
  ): PromiseLike<G>;
  /** Wraps a `stream` call. */
  wrapStream<S extends StreamResult, P extends CallParams>(
    options: {
      doGenerate: () => PromiseLike<unknown>;
      doStream: () => PromiseLike<S>;
      params: P;
      model: ModelInfo;
    },
  ): PromiseLike<S>;
}
