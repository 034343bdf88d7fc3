// Deep-frozen copies of the values hook payloads carry (tool arguments and results), so a
// handler can read the real value but cannot change what the tool or the next handler sees.

/**
 * A deep copy of `value` in which every plain object and array is frozen. Other objects (Date,
 * Map, class instances) are copied with `structuredClone` when they can be, and frozen
 * shallowly; what cannot be cloned (functions, streams) is kept as is. Cycles are kept.
 */
export function deepFrozenCopy<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Object.getPrototypeOf(value) === Object.prototype) {
    // Fast path: a flat object of primitives (most tool arguments) needs no cycle map.
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    let flat = true;
    for (const key in out) {
      const item = out[key];
      if (item !== null && typeof item === "object") {
        flat = false;
        break;
      }
    }
    if (flat) return Object.freeze(out) as T;
  }
  return copy(value, new Map()) as T;
}

function copy(value: unknown, seen: Map<object, unknown>): unknown {
  if (value === null || typeof value !== "object") return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out.push(copy(value[i], seen));
    return Object.freeze(out);
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    const out: Record<string, unknown> = proto === null ? Object.create(null) : {};
    seen.set(value, out);
    for (const key of Object.keys(value)) {
      out[key] = copy((value as Record<string, unknown>)[key], seen);
    }
    return Object.freeze(out);
  }
  let cloned: unknown = value;
  try {
    cloned = structuredClone(value);
  } catch {
    // Not cloneable (a stream, a function-bearing object): the reference is all there is.
    seen.set(value, value);
    return value;
  }
  seen.set(value, cloned);
  try {
    Object.freeze(cloned);
  } catch {
    // Typed arrays with elements cannot be frozen; the copy still protects the original.
  }
  return cloned;
}

/** Whether a value is a plain object (not an array, not a class instance). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
