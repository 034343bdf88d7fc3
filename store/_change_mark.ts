// A cheap "has anything been committed since?" probe for stores without a change feed, so a
// reader (the web console) can poll often without reading rows. Private to the library: a store
// registers its probe here; nothing of it is public API.

const marks = new WeakMap<object, () => string>();

/**
 * Registers `store`'s probe: a value that changes whenever any process commits a write to it
 * (equal values: nothing was committed in between).
 */
export function registerChangeMark(store: object, mark: () => string): void {
  marks.set(store, mark);
}

/** The change probe of `store`, when it registered one. */
export function changeMarkOf(store: object): (() => string) | undefined {
  return marks.get(store);
}
