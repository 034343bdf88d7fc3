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

/**
 * Turns a shell-style glob (`*`, `?`, `[...]`, `{a,b}`) for one path component into a RegExp.
 * No `eval`; every other character is matched literally.
 */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  let inClass = false;
  let braceDepth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (inClass) {
      if (c === "]") {
        inClass = false;
        source += "]";
      } else if (c === "\\") {
        source += "\\\\";
      } else {
        source += c;
      }
      continue;
    }
    if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else if (c === "[" && glob.indexOf("]", i + 2) !== -1) {
      inClass = true;
      source += "[";
      if (glob[i + 1] === "!") {
        source += "^";
        i++;
      }
    } else if (c === "{") {
      braceDepth++;
      source += "(?:";
    } else if (c === "}" && braceDepth > 0) {
      braceDepth--;
      source += ")";
    } else if (c === "," && braceDepth > 0) source += "|";
    else source += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  while (braceDepth-- > 0) source += ")";
  return new RegExp(`^${source}$`);
}

/** Whether a glob has any wildcard character. */
export function hasGlobChars(value: string): boolean {
  return /[*?[]/.test(value);
}
