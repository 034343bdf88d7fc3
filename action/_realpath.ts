/**
 * `realpathLoose`: the real path of a path that may not exist yet, shared by `guardPaths` and
 * the coding workspace so both confine paths the same way.
 *
 * @module
 */

import { baseName, normalizePath, parentPath } from "./_path.ts";

/** The file-system calls {@linkcode realpathLoose} needs. */
export interface RealpathFileSystem {
  /** The canonical path; rejects when it does not exist. */
  realpath(path: string): Promise<string>;
  /** Whether the path itself is a symbolic link (`false` when missing). */
  isSymlink(path: string): Promise<boolean>;
}

/**
 * The realpath of the longest existing prefix of the absolute `path`, with the missing rest
 * appended. A dangling symlink on the way could be written through later, so meeting one
 * throws `refuse()`.
 */
export async function realpathLoose(
  fs: RealpathFileSystem,
  path: string,
  refuse: () => Error,
): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = normalizePath(await fs.realpath(current));
      return missing.length ? normalizePath(`${real}/${missing.reverse().join("/")}`) : real;
    } catch {
      if (current === "/") return path;
      if (await fs.isSymlink(current)) throw refuse();
      missing.push(baseName(current));
      current = parentPath(current);
    }
  }
}
