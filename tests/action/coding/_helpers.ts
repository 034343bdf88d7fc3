// Shared helpers for the coding toolkit tests: a temporary tree with a workspace and hostile
// neighbours, and a snapshot of everything outside the workspace.
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createHash } from "node:crypto";
import { ActionManager } from "../../../action/mod.ts";
import { CodingToolkit } from "../../../action/coding/mod.ts";

export interface Sandbox {
  /** The temp directory holding everything (real path). */
  base: string;
  /** The workspace root: base/ws. */
  ws: string;
  /** A directory outside the workspace: base/outside. */
  outside: string;
  /** A sibling sharing the root's prefix: base/ws-evil. */
  evil: string;
  /**
   * The toolkits' effects state (staged runs, checkpoints, kept layers): base/state, so that no
   * test writes into the default under the user's home.
   */
  effectsDir: string;
  cleanup(): void;
}

export function makeSandbox(): Sandbox {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-coding-")));
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  const evil = join(base, "ws-evil");
  for (const dir of [ws, outside, evil, join(ws, "src")]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(outside, "secret.txt"), "outside secret\n");
  writeFileSync(join(evil, "x.txt"), "evil sibling\n");
  writeFileSync(join(ws, "src", "main.py"), "print('hi')\n");
  return {
    base,
    ws,
    outside,
    evil,
    effectsDir: effectsDirFor(ws),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** Every entry under `dir` with its type, content or link target and mtime. */
export function snapshot(dir: string): string[] {
  const out: string[] = [];
  const visit = (path: string) => {
    const info = lstatSync(path);
    if (info.isSymbolicLink()) {
      out.push(`${path} -> ${readlinkSync(path)}`);
    } else if (info.isDirectory()) {
      out.push(`${path}/`);
      for (const name of readdirSync(path).sort()) visit(join(path, name));
    } else {
      out.push(`${path} ${info.mtimeMs} ${readFileSync(path, "utf8")}`);
    }
  };
  visit(dir);
  return out;
}

/**
 * Where the effects state of a toolkit on `ws` goes in a test: `state` beside `ws`, in the test's
 * temporary directory (never the default under the user's home).
 */
export function effectsDirFor(ws: string): string {
  return join(dirname(ws), "state");
}

/** An ActionManager with the toolkit's tools (default: a toolkit on `ws`, see effectsDirFor). */
export function managerFor(ws: string, toolkit?: CodingToolkit): ActionManager {
  const manager = new ActionManager();
  const tools = toolkit ?? new CodingToolkit({ workspaceRoot: ws, effectsDir: effectsDirFor(ws) });
  for (const tool of tools.bind()) {
    manager.register(tool);
  }
  return manager;
}

export interface Result {
  success: boolean;
  error?: string;
  [key: string]: unknown;
}

export async function run(
  manager: ActionManager,
  name: string,
  args: Record<string, unknown>,
): Promise<Result> {
  const call = await manager.invoke({ function: name, arguments: args });
  if (call.status !== "completed") throw call.execution.error;
  return call.response as Result;
}

/** A hash of a whole tree: every entry's path, type, mode, mtime and content or target. */
export function treeHash(dir: string, withTimes = true): string {
  const hash = createHash("sha256");
  const visit = (path: string, rel: string) => {
    const info = lstatSync(path);
    hash.update(`${rel}\0${info.mode}\0${withTimes && !info.isDirectory() ? info.mtimeMs : 0}\0`);
    if (info.isSymbolicLink()) hash.update(`-> ${readlinkSync(path)}\0`);
    else if (info.isFile()) hash.update(readFileSync(path));
    else if (info.isDirectory()) {
      for (const name of readdirSync(path).sort()) visit(join(path, name), `${rel}/${name}`);
    }
    hash.update("\n");
  };
  visit(dir, "");
  return hash.digest("hex");
}
