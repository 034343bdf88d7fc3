/**
 * Endpoints a model can call: the OpenAI-compatible chat-completions endpoint.
 *
 * @example
 * ```ts
 * import { OpenAICompatibleEndpoint } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const endpoint = new OpenAICompatibleEndpoint({ baseURL: "http://127.0.0.1:1/v1/" });
 * assert.equal(endpoint.url, "http://127.0.0.1:1/v1/chat/completions");
 * ```
 *
 * @module
 */

export * from "./openai_compatible.ts";
export * from "./openai_messages.ts";
