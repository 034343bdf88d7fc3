/**
 * The `Policy` type (defined with the session, re-exported here for policy files).
 *
 * @module
 */

export type { Policy } from "../session/policy.ts";
