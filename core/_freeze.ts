// Deep-frozen copies of the values hook payloads carry (tool arguments and results), so a
// handler can read the real value but cannot change what the tool or the next handler sees.

import { NotPlainDataError, type NotPlainDataProblem } from "./plain_data.ts";
import { MAX_PAYLOAD_DEPTH, PayloadTooDeepError } from "./_depth.ts";

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

function copy(value: unknown, seen: Map<object, unknown>, depth = 1): unknown {
  if (value === null || typeof value !== "object") return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (depth > MAX_PAYLOAD_DEPTH) throw new PayloadTooDeepError("a hook payload value");
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out.push(copy(value[i], seen, depth + 1));
    return Object.freeze(out);
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    const out: Record<string, unknown> = proto === null ? Object.create(null) : {};
    seen.set(value, out);
    for (const key of Object.keys(value)) {
      out[key] = copy((value as Record<string, unknown>)[key], seen, depth + 1);
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

/** Deeper than this is refused (a copy must not overflow the stack). */
const MAX_DEPTH = MAX_PAYLOAD_DEPTH;

/**
 * A copy of `value` made of plain data only, read once: every own enumerable property's
 * descriptor is read once and only data properties are taken, so a getter, a setter, a proxy or
 * an inherited property cannot show one value to the reader that judges the copy and another to
 * the one that runs it. Arrays and objects whose prototype is `Object.prototype` or `null` are
 * copied (objects come out with `Object.prototype`; a `"__proto__"` key stays an own property);
 * `null`, booleans, numbers, bigints, strings and `undefined` are kept. Anything else — a cycle,
 * a function, a symbol value or enumerable symbol key, an accessor, an object of another class,
 * more than 256 levels — throws {@linkcode NotPlainDataError} (its message starts with `action`
 * and its path with `root`). With `freeze`, every copied object and array is frozen.
 */
export function plainDataCopy(
  value: unknown,
  action: string,
  root: string,
  freeze: boolean,
): unknown {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const record = copyRecord(value, null, action, root, freeze);
    return freeze ? Object.freeze(record) : record;
  }
  return copyData(value, { action, path: [root], open: null, root: null, freeze });
}

/**
 * Copies a plain object that is not an array (see {@linkcode plainDataCopy}). At the top
 * (`state` is `null`) the copy state is made only when a nested value needs it: most tool
 * arguments are flat, and cost no state and no path array.
 */
function copyRecord(
  object: object,
  state: CopyState | null,
  action: string,
  root: string,
  freeze: boolean,
): Record<string, unknown> {
  const proto = Object.getPrototypeOf(object);
  if (proto !== Object.prototype && proto !== null) {
    return fail(state, action, root, undefined, "not_plain_object");
  }
  if (hasEnumerableSymbol(object)) return fail(state, action, root, undefined, "symbol");
  const record: Record<string, unknown> = {};
  const keys = Object.keys(object);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const d = Object.getOwnPropertyDescriptor(object, key);
    if (d === undefined || !d.enumerable) continue; // a proxy that lies about its keys
    if (d.get !== undefined || d.set !== undefined || !("value" in d)) {
      return fail(state, action, root, key, "getter");
    }
    let copied = d.value;
    const type = typeof copied;
    if ((type === "object" && copied !== null) || type === "function" || type === "symbol") {
      const nested = state ??= { action, path: [root], open: null, root: object, freeze };
      nested.path.push(key);
      copied = copyData(copied, nested);
      nested.path.pop();
    }
    setData(record, key, copied);
  }
  return record;
}

/** Throws the error of `problem` at `key` of the object being copied (at its root without state). */
function fail(
  state: CopyState | null,
  action: string,
  root: string,
  key: string | undefined,
  problem: NotPlainDataProblem,
): never {
  if (state === null) {
    throw new NotPlainDataError(action, key === undefined ? [root] : [root, key], problem);
  }
  if (key !== undefined) state.path.push(key);
  return refuse(state, problem);
}

/** Whether `object` has an enumerable own symbol key (plain data has none). */
function hasEnumerableSymbol(object: object): boolean {
  const symbols = Object.getOwnPropertySymbols(object);
  for (let i = 0; i < symbols.length; i++) {
    if (Object.getOwnPropertyDescriptor(object, symbols[i])?.enumerable) return true;
  }
  return false;
}

/** `record[key] = value` as an own data property, also for a `"__proto__"` key. */
function setData(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(record, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else record[key] = value;
}

interface CopyState {
  readonly action: string;
  readonly path: (string | number)[];
  /** The objects being copied (the current ancestors), made at the first nested object. */
  open: Set<object> | null;
  /** The outermost object (the first entry of `open` once it is made). */
  root: object | null;
  readonly freeze: boolean;
}

function refuse(state: CopyState, problem: NotPlainDataProblem): never {
  throw new NotPlainDataError(state.action, state.path, problem);
}

function copyData(item: unknown, state: CopyState): unknown {
  if (item === null) return item;
  const type = typeof item;
  if (type === "function") return refuse(state, "function");
  if (type === "symbol") return refuse(state, "symbol");
  if (type !== "object") return item;
  const object = item as object;
  const depth = state.path.length;
  if (depth === 1) state.root = object;
  else {
    const open = state.open ??= new Set([state.root!]);
    if (open.has(object)) return refuse(state, "cycle");
    if (depth > MAX_DEPTH) return refuse(state, "too_deep");
  }
  state.open?.add(object);
  let out: unknown[] | Record<string, unknown>;
  if (Array.isArray(object)) {
    if (Object.getPrototypeOf(object) !== Array.prototype) refuse(state, "not_plain_object");
    const length = Object.getOwnPropertyDescriptor(object, "length")!.value as number;
    const list: unknown[] = new Array(length);
    for (let i = 0; i < length; i++) {
      const d = Object.getOwnPropertyDescriptor(object, i);
      state.path.push(i);
      if (d !== undefined && (d.get !== undefined || d.set !== undefined)) refuse(state, "getter");
      list[i] = d === undefined ? undefined : copyData(d.value, state);
      state.path.pop();
    }
    out = list;
  } else out = copyRecord(object, state, state.action, "", state.freeze);
  state.open?.delete(object);
  return state.freeze ? Object.freeze(out) : out;
}

/** Whether two plain-data values (as {@linkcode plainDataCopy} makes them) are equal. */
export function samePlainData(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameItem(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const count = ka.length;
  if (count !== kb.length) return false;
  for (let i = 0; i < count; i++) {
    const key = ka[i];
    // Keys in the same order (the usual case: one object copied from the other) are own keys of
    // both; only a key out of order needs the own-property check.
    if (key !== kb[i] && !Object.hasOwn(b, key)) return false;
    if (!sameItem((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) {
      return false;
    }
  }
  return true;
}

/** {@linkcode samePlainData} with equal primitives settled without a call. */
function sameItem(a: unknown, b: unknown): boolean {
  return Object.is(a, b) ||
    (typeof a === "object" && typeof b === "object" && samePlainData(a, b));
}
