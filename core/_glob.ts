// The glob matcher for names a model chooses (tool names in `HookOptions.match`): `*` any run of
// characters, `?` exactly one (UTF-16 code unit), everything else itself. Private to the library.
//
// Greedy two-pointer matching with one resumable star, no backtracking stack and no RegExp: when
// a literal fails, only the most recent `*` absorbs one more character. That is correct for `*`
// and `?` because a later star can absorb anything an earlier one could, and it bounds the work
// at O(glob × name) in the worst case (`*_*_*_x` against 10 000 underscores: ~10^5 steps, where
// a backtracking RegExp took tens of seconds).

/**
 * Whether `text` matches `glob` as a whole. Linear in `text` per star retry: at most
 * `glob.length × text.length` character comparisons.
 */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  const gl = glob.length;
  const tl = text.length;
  while (t < tl) {
    if (g < gl) {
      const c = glob.charCodeAt(g);
      if (c === 42 /* * */) {
        star = g++;
        resume = t;
        continue;
      }
      if (c === 63 /* ? */ || c === text.charCodeAt(t)) {
        g++;
        t++;
        continue;
      }
    }
    if (star === -1) return false;
    // The last star takes one more character; the glob after it is retried from there.
    g = star + 1;
    t = ++resume;
  }
  while (g < gl && glob.charCodeAt(g) === 42) g++;
  return g === gl;
}

/** A test of one glob, for callers that keep the compiled form (plain names skip the loop). */
export function globMatcher(glob: string): (text: string) => boolean {
  if (!/[*?]/.test(glob)) return (text) => text === glob;
  const star = glob.indexOf("*");
  if (star === glob.length - 1 && glob.indexOf("?") === -1) {
    const prefix = glob.slice(0, -1);
    return (text) => text.startsWith(prefix);
  }
  return (text) => globMatches(glob, text);
}
