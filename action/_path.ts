/**
 * POSIX path arithmetic without the file system, so the web-standard action scope can reason
 * about paths. Every function is lexical: symlinks are the caller's concern.
 *
 * @module
 */

/** Whether `path` is absolute (starts with `/`). */
export function isAbsolutePath(path: string): boolean {
  return path.startsWith("/");
}

/** Collapses `.`, `..` and repeated slashes; `..` never climbs above `/` for absolute paths. */
export function normalizePath(path: string): string {
  const absolute = isAbsolutePath(path);
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(part);
  }
  const joined = out.join("/");
  if (absolute) return `/${joined}`;
  return joined === "" ? "." : joined;
}

/** Resolves `path` against the absolute `base` (an absolute `path` ignores `base`). */
export function resolvePath(base: string, path: string): string {
  return normalizePath(isAbsolutePath(path) ? path : `${base}/${path}`);
}

/** Whether the normalized absolute `path` is `root` or lies below it (never a prefix sibling). */
export function isInside(root: string, path: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(prefix);
}

/** The last component of a path (`""` for `/`). */
export function baseName(path: string): string {
  const parts = path.split("/").filter((p) => p !== "");
  return parts.length ? parts[parts.length - 1] : "";
}

/** The parent of a normalized absolute path (`/` stays `/`). */
export function parentPath(path: string): string {
  const index = path.lastIndexOf("/");
  return index <= 0 ? "/" : path.slice(0, index);
}

/** The relative path from the absolute `root` to the absolute `path` inside it. */
export function relativeTo(root: string, path: string): string {
  if (path === root) return ".";
  const prefix = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** The most alternatives a glob's braces may expand to. */
export const MAX_GLOB_ALTERNATIVES = 256;

type GlobPiece =
  | { kind: "char"; char: string }
  | { kind: "any" }
  | { kind: "star" }
  | { kind: "class"; ranges: [string, string][]; negated: boolean };
type GlobNode = GlobPiece | { kind: "alt"; options: GlobNode[][] };

/**
 * Compiles a shell-style glob for one path component (`*`, `?`, `[...]` with ranges and `!`/`^`
 * negation, `{a,b}` alternatives; `*` and `?` never match `/`; every other character is
 * literal) into a matcher. Matching never backtracks exponentially: it runs in
 * O(pattern × name) per brace alternative, so a hostile glob such as `*a*a*a*a*a*b` cannot
 * hang the caller (a RegExp built from it would). Throws `TypeError` when the braces expand to
 * more than {@linkcode MAX_GLOB_ALTERNATIVES} alternatives.
 */
export function globMatcher(glob: string): (name: string) => boolean {
  let i = 0;
  const parseSequence = (depth: number): GlobNode[] => {
    const out: GlobNode[] = [];
    while (i < glob.length) {
      const c = glob[i];
      if (depth > 0 && (c === "," || c === "}")) return out;
      if (c === "{") {
        i++;
        const options = [parseSequence(depth + 1)];
        while (glob[i] === ",") {
          i++;
          options.push(parseSequence(depth + 1));
        }
        if (glob[i] === "}") i++;
        out.push({ kind: "alt", options });
      } else if (c === "*") {
        i++;
        if (out[out.length - 1]?.kind !== "star") out.push({ kind: "star" });
      } else if (c === "?") {
        i++;
        out.push({ kind: "any" });
      } else if (c === "[" && glob.indexOf("]", i + 2) !== -1) {
        let j = i + 1;
        const negated = glob[j] === "!" || glob[j] === "^";
        if (negated) j++;
        const close = glob.indexOf("]", j + 1);
        if (close === -1) {
          out.push({ kind: "char", char: c });
          i++;
          continue;
        }
        const members = glob.slice(j, close);
        const ranges: [string, string][] = [];
        for (let k = 0; k < members.length; k++) {
          if (members[k + 1] === "-" && k + 2 < members.length) {
            ranges.push([members[k], members[k + 2]]);
            k += 2;
          } else ranges.push([members[k], members[k]]);
        }
        out.push({ kind: "class", ranges, negated });
        i = close + 1;
      } else {
        out.push({ kind: "char", char: c });
        i++;
      }
    }
    return out;
  };
  const tree = parseSequence(0);
  const expand = (nodes: readonly GlobNode[]): GlobPiece[][] => {
    let results: GlobPiece[][] = [[]];
    for (const node of nodes) {
      const tails: GlobPiece[][] = node.kind === "alt"
        ? node.options.flatMap((option) => expand(option))
        : [[node]];
      const next: GlobPiece[][] = [];
      for (const head of results) {
        for (const tail of tails) {
          if (next.length >= MAX_GLOB_ALTERNATIVES) {
            throw new TypeError(
              `Cannot compile glob ${
                JSON.stringify(glob)
              }: more than ${MAX_GLOB_ALTERNATIVES} brace alternatives`,
            );
          }
          next.push([...head, ...tail]);
        }
      }
      results = next;
    }
    return results;
  };
  const alternatives = expand(tree);
  return (name: string): boolean => alternatives.some((pieces) => matchPieces(pieces, name));
}

function matchOne(piece: GlobPiece, c: string): boolean {
  if (piece.kind === "char") return piece.char === c;
  if (c === "/") return false;
  if (piece.kind === "any") return true;
  if (piece.kind === "class") {
    const hit = piece.ranges.some(([low, high]) => c >= low && c <= high);
    return hit !== piece.negated;
  }
  return false;
}

/** Greedy wildcard matching with one resumable star: linear in the name per star retry. */
function matchPieces(pieces: readonly GlobPiece[], name: string): boolean {
  let p = 0;
  let n = 0;
  let starPiece = -1;
  let starName = 0;
  while (n < name.length) {
    const piece = pieces[p];
    if (piece?.kind === "star") {
      starPiece = p++;
      starName = n;
      continue;
    }
    if (piece !== undefined && matchOne(piece, name[n])) {
      p++;
      n++;
      continue;
    }
    // Let the last star absorb one more character (never a `/`) and retry after it.
    if (starPiece !== -1 && name[starName] !== "/") {
      p = starPiece + 1;
      n = ++starName;
      continue;
    }
    return false;
  }
  while (pieces[p]?.kind === "star") p++;
  return p === pieces.length;
}

/** Whether a glob has any wildcard character. */
export function hasGlobChars(value: string): boolean {
  return /[*?[]/.test(value);
}
