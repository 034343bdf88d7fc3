/**
 * A private key on `AgentSpec`: a counter bumped whenever a hook list is created, so the tool
 * chains can keep their merged lists until then (see `PhaseHooks` in `_chain.ts`).
 *
 * @module
 */

/** Key of an `AgentSpec`'s hook-list version. */
export const SPEC_VERSION: unique symbol = Symbol("hookscope.specVersion");
