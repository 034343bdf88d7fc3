/**
 * LangChain.js v1 adapter: {@linkcode hookscopeMiddleware} puts the tool calls of a
 * `createAgent` agent under hookscope's session decisions and its model calls under service hooks. Needs the `langchain` package (an
 * optional peer).
 *
 * @example
 * ```ts
 * import { hookscopeMiddleware } from "@hookscope/core/langchain";
 * import { Session } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const middleware = hookscopeMiddleware({ session: new Session() });
 * assert.equal(middleware.name, "HookscopeMiddleware");
 * ```
 *
 * @module
 */

export {
  type HookscopeInterruptValue,
  type HookscopeMiddleware,
  hookscopeMiddleware,
  type HookscopeMiddlewareOptions,
} from "./middleware.ts";
export { type LangChainModelCall, ModelCallRefusedError } from "./model_call.ts";
