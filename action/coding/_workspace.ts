/**
 * The workspace every coding tool is confined to: paths resolve against its real root and must
 * stay inside it after symlinks are resolved; files and directories are then opened race-free
 * (no symlink followed, the opened descriptor checked) and hard-linked files are refused.
 *
 * @module
 */

import { constants } from "node:fs";
import {
  type FileHandle,
  lstat,
  open,
  readdir,
  readlink,
  realpath,
  stat,
  unlink,
} from "node:fs/promises";
import type { Dirent } from "node:fs";
import { type RealpathFileSystem, realpathLoose } from "../_realpath.ts";
import {
  baseName,
  isInside,
  normalizePath,
  parentPath,
  relativeTo,
  resolvePath,
} from "../_path.ts";
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
  /** Whether `/proc/self/fd` reports open descriptors (Linux); turned off on first miss. */
  #proc = true;
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

  /**
   * Opens a path that {@linkcode Workspace.resolve} returned, race-free: the last component is
   * opened without following a symlink (`O_NOFOLLOW`), FIFOs do not block (`O_NONBLOCK`), and
   * the OPENED descriptor is checked — on Linux by reading `/proc/self/fd/N`, elsewhere by
   * comparing its device and inode with a fresh realpath-checked `lstat` — to be the expected
   * file inside the workspace. A symlink swapped in between the check and the open is refused,
   * never read or written. Regular files only; hard-linked files (more than one link) are
   * refused, since a hard link may share its content with a file outside the workspace.
   *
   * `mode`: `read`; `update` (read and write an existing file); `create` (a new file, failing
   * with `EEXIST` when one appeared).
   */
  async openFile(
    path: string,
    raw: string,
    mode: "read" | "update" | "create",
  ): Promise<FileHandle> {
    const base = constants.O_NOFOLLOW ?? 0;
    const flags = mode === "read"
      ? constants.O_RDONLY | base | (constants.O_NONBLOCK ?? 0)
      : mode === "update"
      ? constants.O_RDWR | base | (constants.O_NONBLOCK ?? 0)
      : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | base;
    let handle: FileHandle;
    const held: FileHandle[] = [];
    try {
      handle = await open(await this.#anchored(path, raw, held), flags, 0o644);
    } catch (error) {
      const code = (error as { code?: string })?.code;
      if (code === "ELOOP" || code === "EMLINK") {
        throw new WorkspaceError(`Refusing to access symlink: '${raw}'`);
      }
      throw error;
    } finally {
      for (const dir of held) await dir.close().catch(() => {});
    }
    try {
      const info = await handle.stat();
      if (info.isDirectory()) throw new WorkspaceError(`Is a directory: ${raw}`);
      if (!info.isFile()) throw new WorkspaceError(`Not a regular file: ${raw}`);
      if (info.nlink > 1) {
        throw new WorkspaceError(
          `Refusing to access a hard-linked file: ${raw} (${info.nlink} links)`,
        );
      }
      await this.#verifyDescriptor(handle, info, path, raw);
      return handle;
    } catch (error) {
      // A file this call created exclusively somewhere else (a directory on the way was
      // swapped for a symlink) is removed again: it is empty, and it is ours.
      if (mode === "create") await this.#removeStray(handle);
      await handle.close().catch(() => {});
      throw error;
    }
  }

  /**
   * The entries of a directory that {@linkcode Workspace.resolve} returned, read race-free: on
   * Linux the directory is opened without following a symlink, checked by descriptor, and
   * listed through `/proc/self/fd/N`; elsewhere the real path is checked before and after.
   */
  async readDirectory(path: string, raw: string): Promise<Dirent[]> {
    let handle: FileHandle | null = null;
    try {
      handle = await open(
        path,
        constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_DIRECTORY ?? 0),
      );
    } catch (error) {
      const code = (error as { code?: string })?.code;
      if (code === "ELOOP") throw new WorkspaceError(`Refusing to access symlink: '${raw}'`);
      if (code !== "EISDIR" && code !== "EPERM" && code !== "EACCES") throw error;
    }
    try {
      if (handle) {
        const info = await handle.stat();
        if (!info.isDirectory()) throw new WorkspaceError(`Not a directory: ${raw}`);
        const viaProc = await this.#procPath(handle);
        if (viaProc !== null) {
          this.#checkInside(viaProc, path, raw);
          return await readdir(`/proc/self/fd/${handle.fd}`, { withFileTypes: true });
        }
        await this.#checkSame(info, path, raw);
      }
      const entries = await readdir(path, { withFileTypes: true });
      // Without /proc: the path must still be the same directory after listing.
      await this.#checkSame(await stat(path), path, raw);
      return entries;
    } finally {
      await handle?.close().catch(() => {});
    }
  }

  /**
   * On Linux, the path to open through a descriptor of its parent directory
   * (`/proc/self/fd/N/name`, like `openat`): the parent is opened without following a symlink
   * and checked first, so swapping a directory on the way cannot redirect the open. Elsewhere
   * the path itself (the opened descriptor is checked afterwards).
   */
  async #anchored(path: string, raw: string, held: FileHandle[]): Promise<string> {
    if (!this.#proc) return path;
    const parent = parentPath(path);
    let dir: FileHandle;
    try {
      dir = await open(
        parent,
        constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_DIRECTORY ?? 0),
      );
    } catch (error) {
      const code = (error as { code?: string })?.code;
      if (code === "ELOOP" || code === "ENOTDIR") {
        throw new WorkspaceError(
          `Path escapes workspace root: ${raw} (it changed while it was opened)`,
        );
      }
      throw error;
    }
    held.push(dir);
    const where = await this.#procPath(dir);
    if (where === null) {
      this.#proc = false;
      return path;
    }
    if (where !== parent || !isInside(this.#root, where)) {
      throw new WorkspaceError(
        `Path escapes workspace root: ${raw} (it changed while it was opened)`,
      );
    }
    return `/proc/self/fd/${dir.fd}/${baseName(path)}`;
  }

  async #removeStray(handle: FileHandle): Promise<void> {
    try {
      const where = await this.#procPath(handle);
      if (where === null) return;
      const [opened, now] = await Promise.all([handle.stat(), lstat(where)]);
      if (opened.size === 0 && opened.dev === now.dev && opened.ino === now.ino) {
        await unlink(where);
      }
    } catch {
      // Best effort: the refusal is what matters.
    }
  }

  /** The path the kernel reports for an open descriptor, or `null` without `/proc`. */
  async #procPath(handle: FileHandle): Promise<string | null> {
    try {
      const target = await readlink(`/proc/self/fd/${handle.fd}`);
      return target.startsWith("/") ? target : null;
    } catch {
      return null;
    }
  }

  async #verifyDescriptor(
    handle: FileHandle,
    info: { dev: number | bigint; ino: number | bigint },
    path: string,
    raw: string,
  ): Promise<void> {
    const viaProc = await this.#procPath(handle);
    if (viaProc !== null) {
      this.#checkInside(viaProc, path, raw);
      return;
    }
    await this.#checkSame(info, path, raw);
  }

  #checkInside(opened: string, expected: string, raw: string): void {
    const root = this.#root;
    if (!root || opened !== expected || !isInside(root, opened)) {
      throw new WorkspaceError(
        `Path escapes workspace root: ${raw} (it changed while it was opened)`,
      );
    }
    if (isProtectedBasename(baseName(opened))) {
      throw new WorkspaceError(`Refusing to access protected path: '${baseName(opened)}'`);
    }
  }

  async #checkSame(
    info: { dev: number | bigint; ino: number | bigint },
    path: string,
    raw: string,
  ): Promise<void> {
    const real = normalizePath(await realpath(path).catch(() => ""));
    const now = await lstat(real || path).catch(() => null);
    if (
      !real || real !== path || !now || !isInside(this.#root, real) ||
      String(now.dev) !== String(info.dev) || String(now.ino) !== String(info.ino)
    ) {
      throw new WorkspaceError(
        `Path escapes workspace root: ${raw} (it changed while it was opened)`,
      );
    }
  }

  /** The path relative to the root, for output. */
  relative(path: string): string {
    return relativeTo(this.#root || this.requested, path);
  }

  /**
   * Records that `path` now holds `bytes` (written by a tool): its mtime, size and digest,
   * taken from the open descriptor when one is given.
   */
  async remember(path: string, bytes: Uint8Array, handle?: FileHandle): Promise<void> {
    const info = handle ? await handle.stat() : await stat(path);
    this.reads.set(path, { mtimeMs: info.mtimeMs, size: info.size, digest: await digestOf(bytes) });
  }
}
