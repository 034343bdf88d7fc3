/**
 * The workspace every coding tool is confined to: paths resolve against its real root and must
 * stay inside it after symlinks are resolved.
 *
 * @module
 */

import { lstat, realpath, stat } from "node:fs/promises";
import { type RealpathFileSystem, realpathLoose } from "../_realpath.ts";
import { baseName, isInside, normalizePath, relativeTo, resolvePath } from "../_path.ts";
import { isProtectedBasename } from "../guards.ts";

const NODE_REALPATH: RealpathFileSystem = {
  realpath: (path) => realpath(path),
  isSymlink: (path) => lstat(path).then((info) => info.isSymbolicLink(), () => false),
};

/** A refused path; the tools turn it into `{ success: false, error }`. */
export class WorkspaceError extends Error {
  /** Makes the error. */
  constructor(message: string) {
    super(message);
    this.name = "WorkspaceError";
  }
}

/** What a tool remembers about a file it read (the editor's overwrite guard). */
export interface ReadRecord {
  /** Modification time at the read, in ms. */
  mtimeMs: number;
  /** Size at the read, in bytes. */
  size: number;
  /**
   * SHA-256 (hex) of the bytes read: a same-size change that keeps (or restores) the
   * modification time is still a change.
   */
  digest: string;
}

/** The SHA-256 of `bytes` as lowercase hex. */
export async function digestOf(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  let hex = "";
  for (const byte of hash) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** A workspace root plus the read records its tools share. */
export class Workspace {
  /** The absolute root as given (symlinks not yet resolved). */
  readonly requested: string;
  /** Files read, by real path. */
  readonly reads: Map<string, ReadRecord> = new Map();
  #real: Promise<string> | null = null;
  #root = "";

  /** Records the root; it is resolved (realpath) on first use, so no file access happens here. */
  constructor(root: string, cwd: string) {
    if (typeof root !== "string" || root === "" || root.includes("\0")) {
      throw new TypeError(
        `Cannot create coding toolkit: invalid workspace root ${JSON.stringify(root)}`,
      );
    }
    this.requested = resolvePath(cwd, root);
  }

  /** The real (symlink-free) root; rejects with `WorkspaceError` when it is not a directory. */
  realRoot(): Promise<string> {
    this.#real ??= (async () => {
      try {
        const real = normalizePath(await realpath(this.requested));
        if (!(await stat(real)).isDirectory()) throw new Error("not a directory");
        this.#root = real;
        return real;
      } catch (error) {
        this.#real = null;
        throw new WorkspaceError(
          `Workspace root is not an accessible directory: ${this.requested} (${
            (error as Error).message
          })`,
        );
      }
    })();
    return this.#real;
  }

  /**
   * Resolves a user path to a real absolute path inside the workspace (the missing tail of a
   * path that does not exist yet is kept). Refuses NUL bytes, escapes (lexical or through
   * symlinks) and protected basenames.
   */
  async resolve(raw: string): Promise<string> {
    if (typeof raw !== "string" || raw === "") throw new WorkspaceError("'path' is required");
    if (raw.includes("\0")) {
      throw new WorkspaceError(
        `Refusing to access path containing a NUL byte: ${JSON.stringify(raw)}`,
      );
    }
    const root = await this.realRoot();
    const candidate = resolvePath(root, raw);
    if (!isInside(root, candidate)) {
      throw new WorkspaceError(`Path escapes workspace root: ${raw}`);
    }
    const real = await realpathLoose(
      NODE_REALPATH,
      candidate,
      () => new WorkspaceError(`Refusing to access symlink: '${raw}'`),
    );
    if (!isInside(root, real)) {
      throw new WorkspaceError(`Path escapes workspace root: ${raw}`);
    }
    for (const name of [baseName(candidate), baseName(real)]) {
      if (isProtectedBasename(name)) {
        throw new WorkspaceError(`Refusing to access protected path: '${name}'`);
      }
    }
    return real;
  }

  /** The path relative to the root, for output. */
  relative(path: string): string {
    return relativeTo(this.#root || this.requested, path);
  }

  /** Records that `path` now holds `bytes` (written by a tool): its mtime, size and digest. */
  async remember(path: string, bytes: Uint8Array): Promise<void> {
    const info = await stat(path);
    this.reads.set(path, { mtimeMs: info.mtimeMs, size: info.size, digest: await digestOf(bytes) });
  }
}
