/**
 * hookscope for the Vercel AI SDK: {@linkcode hookscopeMiddleware} runs the service scope's hooks
 * (pre/post-invoke with deadlines and exit policy, per-part stream handlers, a hold-back
 * streaming guardrail) as a language-model middleware, and can fire a session's `api.*` points.
 *
 * Depends on no AI SDK package at run time: the specification's shapes are declared here and
 * match `@ai-sdk/provider` 3 (used by `ai@6`).
 *
 * @module
 */

export * from "./middleware.ts";
export type {
  CallParams,
  GenerateResult,
  LanguageModelMiddleware,
  MiddlewareSpecificationVersion,
  ModelInfo,
  ProviderMetadata,
  StreamPart,
  StreamResult,
} from "./_spec.ts";
export * from "./wrap_tools.ts";
export * from "./tape_middleware.ts";
export {
  TapeExhaustedError,
  TapeFormatError,
  TapeMismatchError,
  TapeRecordedError,
  TapeUnconsumedError,
} from "../tape/tape_errors.ts";
export type { TapeFiles, TapeOptions } from "../tape/_tape.ts";
