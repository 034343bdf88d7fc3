/**
 * hookscope for the Vercel AI SDK: {@linkcode hookscopeMiddleware} runs the service scope's hooks
 * (pre/post-invoke with deadlines and exit policy, per-part stream handlers, a hold-back
 * streaming guardrail) as a language-model middleware, and can fire a session's `api.*` points.
 *
 * Imports only types of the AI SDK (`@ai-sdk/provider`); tested with `ai@6`.
 *
 * @module
 */

export * from "./middleware.ts";
export type {
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Middleware,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
