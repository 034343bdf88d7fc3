/**
 * Private: reads a staged run's change set from its overlay upper directory against the real
 * workspace (the lower layer), and the commit plan that applies it. Nothing is followed: every
 * entry is read with `lstat`, symlinks are read as their targets.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { lstat, open, readdir, readlink } from "node:fs/promises";
import type { FileChange } from "./file_change.ts";

/** What one planned step does to one workspace path. */
export type PlanOp =
  /** Put the entry at `source` (a file, symlink or whole directory tree) at `path`. */
  | { kind: "put"; path: string; source: string }
  /** Remove `path` (and all below it). */
  | { kind: "remove"; path: string }
  /** Set a directory's mode. */
  | { kind: "chmod"; path: string; mode: number };

/** A change set and its plan. */
export interface ChangeSet {
  readonly changes: readonly FileChange[];
  readonly plan: readonly PlanOp[];
  /** Entries that cannot be committed (FIFOs, sockets, devices), left out of both. */
  readonly skipped: readonly string[];
}

type Stats = Awaited<ReturnType<typeof lstat>>;

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    if ((error as { code?: string }).code === "ENOTDIR") return null;
    throw error;
  }
}

function isWhiteout(info: Stats): boolean {
  return info.isCharacterDevice() && Number(info.rdev) === 0;
}

function typeOf(info: Stats): "file" | "directory" | "symlink" | undefined {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "directory";
  if (info.isSymbolicLink()) return "symlink";
  return undefined;
}

const MODE_BITS = 0o7777;

/** Whether two regular files hold the same bytes. */
export async function sameContent(a: string, b: string, size: number): Promise<boolean> {
  if (size === 0) return true;
  const [fa, fb] = await Promise.all([open(a, "r"), open(b, "r")]);
  try {
    const chunk = Math.min(size, 1 << 20);
    const ba = new Uint8Array(chunk);
    const bb = new Uint8Array(chunk);
    for (let offset = 0; offset < size;) {
      const [ra, rb] = await Promise.all([
        fa.read(ba, 0, chunk, offset),
        fb.read(bb, 0, chunk, offset),
      ]);
      if (ra.bytesRead !== rb.bytesRead) return false;
      if (ra.bytesRead === 0) return true;
      for (let i = 0; i < ra.bytesRead; i++) if (ba[i] !== bb[i]) return false;
      offset += ra.bytesRead;
    }
    return true;
  } finally {
    await Promise.all([fa.close(), fb.close()]);
  }
}

function join(rel: string, name: string): string {
  return rel === "" ? name : `${rel}/${name}`;
}

async function sortedNames(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

/** Lists every entry of a tree (the root included) as `deleted` changes, deepest last. */
async function listTree(
  abs: string,
  rel: string,
  kind: "created" | "deleted",
  out: FileChange[],
  skipped: string[],
): Promise<void> {
  const info = await lstat(abs);
  if (kind === "created" && isWhiteout(info)) return;
  const type = typeOf(info);
  if (type === undefined) {
    skipped.push(rel);
    return;
  }
  const size = type === "file"
    ? Number(info.size)
    : type === "symlink"
    ? (await readlink(abs)).length
    : undefined;
  const change: { -readonly [K in keyof FileChange]: FileChange[K] } = {
    path: rel,
    kind: type === "symlink" && kind === "created" ? "symlink" : kind,
    type,
  };
  if (size !== undefined) change[kind === "created" ? "bytesAfter" : "bytesBefore"] = size;
  if (type === "symlink" && kind === "created") change.target = await readlink(abs);
  out.push(change);
  if (type === "directory") {
    for (const name of await sortedNames(abs)) {
      await listTree(`${abs}/${name}`, join(rel, name), kind, out, skipped);
    }
  }
}

/**
 * Reads the change set of a staged run: `upper` against the workspace `lower`, with the set of
 * opaque upper directories as the wrapper listed them (`./a/b`).
 */
export async function readChangeSet(
  upper: string,
  lower: string,
  opaque: ReadonlySet<string>,
): Promise<ChangeSet> {
  const changes: FileChange[] = [];
  const plan: PlanOp[] = [];
  const skipped: string[] = [];

  async function visitDir(rel: string): Promise<void> {
    const upperDir = rel === "" ? upper : `${upper}/${rel}`;
    for (const name of await sortedNames(upperDir)) await visit(join(rel, name));
  }

  async function visit(rel: string): Promise<void> {
    const u = await lstat(`${upper}/${rel}`);
    const l = await lstatOrNull(`${lower}/${rel}`);
    const lowerType = l ? typeOf(l) : undefined;
    if (isWhiteout(u)) {
      if (l) {
        await listTree(`${lower}/${rel}`, rel, "deleted", changes, skipped);
        plan.push({ kind: "remove", path: rel });
      }
      return;
    }
    const type = typeOf(u);
    if (type === undefined) {
      skipped.push(rel);
      return;
    }
    if (type === "directory") {
      if (lowerType === "directory" && !opaque.has(`./${rel}`)) {
        if ((Number(u.mode) & MODE_BITS) !== (Number(l!.mode) & MODE_BITS)) {
          changes.push({ path: rel, kind: "mode", type: "directory" });
          plan.push({ kind: "chmod", path: rel, mode: Number(u.mode) & MODE_BITS });
        }
        await visitDir(rel);
        return;
      }
      if (l) await listTree(`${lower}/${rel}`, rel, "deleted", changes, skipped);
      await listTree(`${upper}/${rel}`, rel, "created", changes, skipped);
      plan.push({ kind: "put", path: rel, source: `${upper}/${rel}` });
      return;
    }
    if (type === "file") {
      const bytesAfter = Number(u.size);
      if (lowerType === "file") {
        const same = Number(l!.size) === bytesAfter &&
          await sameContent(`${upper}/${rel}`, `${lower}/${rel}`, bytesAfter);
        const sameMode = (Number(u.mode) & MODE_BITS) === (Number(l!.mode) & MODE_BITS);
        if (same && sameMode) return;
        changes.push({
          path: rel,
          kind: same ? "mode" : "modified",
          type: "file",
          bytesBefore: Number(l!.size),
          bytesAfter,
        });
      } else if (lowerType === "symlink") {
        changes.push({
          path: rel,
          kind: "modified",
          type: "file",
          bytesBefore: (await readlink(`${lower}/${rel}`)).length,
          bytesAfter,
        });
      } else {
        if (l) await listTree(`${lower}/${rel}`, rel, "deleted", changes, skipped);
        changes.push({ path: rel, kind: "created", type: "file", bytesAfter });
      }
      plan.push({ kind: "put", path: rel, source: `${upper}/${rel}` });
      return;
    }
    // a symlink
    const target = await readlink(`${upper}/${rel}`);
    if (lowerType === "symlink" && (await readlink(`${lower}/${rel}`)) === target) return;
    const before: { bytesBefore?: number } = {};
    if (lowerType === "file") before.bytesBefore = Number(l!.size);
    else if (lowerType === "symlink") {
      before.bytesBefore = (await readlink(`${lower}/${rel}`)).length;
    } else if (l) await listTree(`${lower}/${rel}`, rel, "deleted", changes, skipped);
    changes.push({
      path: rel,
      kind: "symlink",
      type: "symlink",
      target,
      ...before,
      bytesAfter: target.length,
    });
    plan.push({ kind: "put", path: rel, source: `${upper}/${rel}` });
  }

  await visitDir("");
  return { changes, plan, skipped };
}

/**
 * The state of the workspace entries a plan replaces, removes or changes the mode of (each entry
 * of a removed tree included): type, size, mode, modification and change times and inode, one
 * string per entry in plan order. Taken when the change set is read and again before it is
 * committed: a difference means the workspace changed in between (another commit, a person, a
 * process outside the toolkit), and the change set is not applied over it.
 */
export async function lowerState(lower: string, plan: readonly PlanOp[]): Promise<string[]> {
  const out: string[] = [];
  const visit = async (rel: string, deep: boolean): Promise<void> => {
    const info = await lstatOrNull(`${lower}/${rel}`);
    if (!info) {
      out.push(`${rel}\0none`);
      return;
    }
    out.push(
      [
        rel,
        typeOf(info) ?? "other",
        Number(info.size),
        Number(info.mode),
        info.mtimeMs,
        info.ctimeMs,
        Number(info.ino),
      ].join("\0"),
    );
    if (deep && info.isDirectory()) {
      for (const name of await sortedNames(`${lower}/${rel}`)) await visit(join(rel, name), true);
    }
  };
  for (const op of plan) await visit(op.path, op.kind !== "chmod");
  return out;
}

/** A file's SHA-256 (hex), read in 1 MiB pieces. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  const handle = await open(path, "r");
  try {
    const buffer = new Uint8Array(1 << 20);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hash.digest("hex");
}

/**
 * The hash of exactly what a change set would commit: its entries, every new entry's type,
 * mode, size and content (SHA-256) or symlink target as it is in `upper`, every removal and mode
 * change, and the state of the workspace entries it replaces ({@linkcode lowerState}). An
 * approval is bound to it.
 */
export async function changeSetHash(
  set: Pick<ChangeSet, "changes" | "plan">,
  lower: readonly string[],
): Promise<string> {
  const hash = createHash("sha256");
  const line = (text: string) => hash.update(`${text}\n`);
  for (const change of set.changes) line(JSON.stringify(change));
  const visit = async (abs: string, rel: string): Promise<void> => {
    const info = await lstat(abs);
    const type = typeOf(info);
    const mode = Number(info.mode) & MODE_BITS;
    if (type === "file") {
      line(`put ${rel} file ${mode} ${Number(info.size)} ${await fileSha256(abs)}`);
    } else if (type === "symlink") {
      line(`put ${rel} symlink ${JSON.stringify(await readlink(abs))}`);
    } else if (type === "directory") {
      line(`put ${rel} directory ${mode}`);
      for (const name of await sortedNames(abs)) await visit(`${abs}/${name}`, join(rel, name));
    } else if (isWhiteout(info)) {
      line(`put ${rel} whiteout`);
    } else line(`put ${rel} skipped`);
  };
  for (const op of set.plan) {
    if (op.kind === "put") await visit(op.source, op.path);
    else if (op.kind === "remove") line(`remove ${op.path}`);
    else line(`chmod ${op.path} ${op.mode}`);
  }
  for (const entry of lower) line(`lower ${JSON.stringify(entry)}`);
  return hash.digest("hex");
}
