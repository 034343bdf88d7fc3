// Where the coding toolkit keeps its effects state by default (staged runs, checkpoints, kept
// layers): $XDG_STATE_HOME/hookscope/effects when XDG_STATE_HOME is an absolute path (the XDG Base
// Directory specification ignores a relative one), else ~/.local/state/hookscope/effects, else the
// temporary directory. Each case sets the variables, reads the default and restores them before
// anything else runs (no await in between: other test files may share this process).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { tmpdir } from "node:os";
import { defaultEffectsDir } from "../../../action/coding/mod.ts";

/** `defaultEffectsDir()` with `env` set (`undefined` unsets a variable), the variables restored. */
function withEnv(env: Record<string, string | undefined>): string {
  const saved: Record<string, string | undefined> = {};
  for (const key of Object.keys(env)) saved[key] = process.env[key];
  const set = (values: Record<string, string | undefined>) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  set(env);
  try {
    return defaultEffectsDir();
  } finally {
    set(saved);
  }
}

describe("defaultEffectsDir()", () => {
  it("honours an absolute XDG_STATE_HOME", () => {
    assert.equal(
      withEnv({ XDG_STATE_HOME: "/srv/state", HOME: "/home/ana" }),
      "/srv/state/hookscope/effects",
    );
  });

  it("falls back to ~/.local/state without XDG_STATE_HOME, or with an empty or relative one", () => {
    for (const state of [undefined, "", "state", "./state"]) {
      assert.equal(
        withEnv({ XDG_STATE_HOME: state, HOME: "/home/ana" }),
        "/home/ana/.local/state/hookscope/effects",
        JSON.stringify(state),
      );
    }
  });

  it("falls back to the temporary directory without a usable HOME", () => {
    for (const home of [undefined, "", "/", "relative"]) {
      assert.equal(
        withEnv({ XDG_STATE_HOME: undefined, HOME: home }),
        `${tmpdir()}/hookscope-effects`,
        JSON.stringify(home),
      );
    }
  });
});
