// Private: finding a program's executable, on `PATH` or in the system directories only.

import { stat } from "node:fs/promises";
import process from "node:process";

/** The `PATH` used when the environment has none. */
export const FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin";

function isExecutable(info: { isFile(): boolean; mode: number }): boolean {
  return info.isFile() && (info.mode & 0o111) !== 0;
}

/** Finds a program: a path (made absolute) or a name on `PATH`; `undefined` when missing. */
export async function findProgram(name: string): Promise<string | undefined> {
  const candidates: string[] = [];
  if (name.includes("/")) {
    candidates.push(name.startsWith("/") ? name : `${process.cwd()}/${name}`);
  } else {
    for (const dir of (process.env.PATH || FALLBACK_PATH).split(":")) {
      if (dir.startsWith("/")) candidates.push(`${dir}/${name}`);
    }
  }
  for (const candidate of candidates) {
    try {
      // Mode bits, not access(X_OK): Deno's access() needs --allow-sys=uid.
      if (isExecutable(await stat(candidate))) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Finds a program in `/usr/bin` or `/bin` only (not on a caller-controlled `PATH`). */
export async function findSystemProgram(name: string): Promise<string | undefined> {
  for (const dir of ["/usr/bin", "/bin"]) {
    try {
      if (isExecutable(await stat(`${dir}/${name}`))) return `${dir}/${name}`;
    } catch {
      // not here
    }
  }
  return undefined;
}
