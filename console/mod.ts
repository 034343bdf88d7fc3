/**
 * The web console over a session store (served by `hookscope console DB` and at `/` by
 * `hookscope serve`): sessions, a live timeline, and approvals answered with a bearer token.
 *
 * @module
 */

export * from "./handler.ts";
