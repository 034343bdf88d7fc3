/**
 * `isPlainObject`: the one test for "an object of arguments" the action scope uses (hook
 * returns that replace arguments, argument validation).
 *
 * @module
 */

/** Whether `value` is a plain object (`{}` literal or a null-prototype object), not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
