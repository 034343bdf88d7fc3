// autoFormat runs a real formatter subprocess (tests/fixtures/formatter.mjs under node) inside
// bubblewrap. The full suite runs this file under Deno with narrowed permissions:
//   deno test --allow-read --allow-write --allow-env --allow-run=node,bwrap
// so "node" and the sandbox may run and every other program (python3 here) is not permitted.
// Where bwrap may not run (an older `--allow-run=node`), the formatting tests run the formatter
// with an explicit sandbox: { kind: "none" } and the sandbox test checks the refusal instead.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { relative } from "node:path";
import {
  autoFormat,
  type AutoFormatHook,
  CodingToolkit,
  runPermission,
  type SandboxOptions,
} from "../../../action/coding/mod.ts";
import { makeSandbox, managerFor, run, type Sandbox } from "./_helpers.ts";

const formatter = fileURLToPath(new URL("../../fixtures/formatter.mjs", import.meta.url));
const MESSY = "a = 1   \nb = 2\t\n\n\n";
// The formatter script lives in the repository, outside the workspace: the sandbox must be told.
const bwrapMayRun = runPermission("bwrap").granted;
const SANDBOX: SandboxOptions = bwrapMayRun ? { readable: [dirname(formatter)] } : { kind: "none" };
const RAN_IN = bwrapMayRun ? "bubblewrap" : "none";
const CLEAN = "a = 1\nb = 2\n";

/** The result the hook's decision replaces the tool's with (`undefined` when it does not apply). */
async function updated(
  hook: AutoFormatHook,
  context: Parameters<AutoFormatHook>[0],
): Promise<unknown> {
  return (await hook(context))?.updatedResult;
}

type Formatted = {
  success: boolean;
  autoFormat?: { status: string; reason?: string; command: string[]; file: string };
};

describe("autoFormat", () => {
  let box: Sandbox;
  before(() => {
    box = makeSandbox();
  });
  after(() => box.cleanup());

  const write = (name: string, text: string) => {
    writeFileSync(join(box.ws, name), text);
    return name;
  };
  const read = (name: string) => readFileSync(join(box.ws, name), "utf8");

  it("autoFormat() pipes the file through the formatter and writes stdout back", async () => {
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      formatters: { ".py": ["node", formatter] },
    });
    const file = write("fmt.py", MESSY);
    const result = await updated(hook, {
      args: { action: "write", filePath: file },
      result: {
        success: true,
        path: file,
      },
    }) as Formatted;
    assert.equal(read(file), CLEAN);
    // Under this file's narrowed permissions staged runs are off (unshare may not run): the
    // record says so. auto_format_staged_test.ts covers the staged formatter.
    const { effects, changes: _c, checkpoint: _k, ...rest } = result.autoFormat as Record<
      string,
      unknown
    >;
    assert.deepEqual({ ...result, autoFormat: rest }, {
      success: true,
      path: file,
      autoFormat: {
        status: "formatted",
        command: ["node", formatter],
        file: join(box.ws, file),
        sandbox: RAN_IN,
      },
    });
    assert.ok(effects === "direct" || effects === "overlay", String(effects));
  });

  it("autoFormat() records unchanged when the formatter's output equals the file", async () => {
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      formatters: { ".py": ["node", formatter] },
    });
    const file = write("clean.py", CLEAN);
    const result = await updated(hook, {
      args: { filePath: file },
      result: {
        success: true,
      },
    }) as Formatted;
    assert.equal(result.autoFormat?.status, "unchanged");
    assert.equal(read(file), CLEAN);
  });

  it("autoFormat() records a failing formatter and leaves the file as it was", async () => {
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      formatters: { ".py": ["node", formatter, "--fail"] },
    });
    const file = write("fail.py", MESSY);
    const result = await updated(hook, {
      args: { filePath: file },
      result: {
        success: true,
      },
    }) as Formatted;
    assert.equal(result.autoFormat?.status, "failed");
    assert.equal(
      result.autoFormat?.reason,
      "Formatter exited with code 3: formatter: cannot parse input\n",
    );
    assert.equal(read(file), MESSY);
  });

  it("autoFormat() stops a hanging formatter at its deadline", async () => {
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      timeoutMs: 300,
      formatters: { ".py": ["node", formatter, "--hang"] },
    });
    const file = write("hang.py", MESSY);
    const result = await updated(hook, {
      args: { filePath: file },
      result: {
        success: true,
      },
    }) as Formatted;
    assert.equal(result.autoFormat?.status, "failed");
    assert.equal(result.autoFormat?.reason, "Formatter timed out after 300 ms");
    assert.equal(read(file), MESSY);
  });

  it("autoFormat() records why it skipped when the formatter may not run", async () => {
    const seen: string[] = [];
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      formatters: { ".py": ["python3", "-m", "black", "-"] },
      canRun: (command) => {
        seen.push(command);
        return { granted: false, reason: `${command} is not in the allow list` };
      },
    });
    const file = write("skip.py", MESSY);
    const result = await updated(hook, {
      args: { filePath: file },
      result: {
        success: true,
      },
    }) as Formatted;
    assert.deepEqual(seen, ["python3"]);
    assert.deepEqual(result.autoFormat, {
      status: "skipped",
      command: ["python3", "-m", "black", "-"],
      file: join(box.ws, file),
      reason: "python3 is not in the allow list",
    });
    assert.equal(read(file), MESSY);
  });

  it("autoFormat() checks Deno's run permission without prompting (python3 is not permitted)", async () => {
    // Node and Bun have no permission system: there runPermission() grants everything, and the
    // injected-canRun test above covers the skip path. Under Deno the real permission decides.
    const deno = (globalThis as {
      Deno?: {
        permissions: { querySync(d: { name: "run"; command: string }): { state: string } };
      };
    }).Deno;
    const state = deno?.permissions.querySync({ name: "run", command: "python3" }).state;
    if (state === undefined || state === "granted") {
      assert.deepEqual(runPermission("python3"), { granted: true });
      return;
    }
    assert.deepEqual(runPermission("node"), { granted: true });
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      formatters: { ".py": ["python3", "-c", "print('CHANGED')"] },
    });
    const file = write("deno-skip.py", MESSY);
    const result = await updated(hook, {
      args: { filePath: file },
      result: {
        success: true,
      },
    }) as Formatted;
    assert.equal(result.autoFormat?.status, "skipped");
    assert.equal(
      result.autoFormat?.reason,
      `Deno run permission for "python3" is not granted (state: ${state})`,
    );
    assert.equal(read(file), MESSY);
  });

  it("autoFormat() does nothing for failed results, other extensions or missing paths", async () => {
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      formatters: { ".py": ["node", formatter] },
    });
    const file = write("untouched.py", MESSY);
    assert.equal(
      await updated(hook, { args: { filePath: file }, result: { success: false } }),
      undefined,
    );
    assert.equal(await updated(hook, { args: { filePath: file }, result: "text" }), undefined);
    assert.equal(
      await updated(hook, { args: { filePath: "notes.md" }, result: { success: true } }),
      undefined,
    );
    assert.equal(await updated(hook, { args: {}, result: { success: true } }), undefined);
    assert.equal(read(file), MESSY);
    const outside = join(box.outside, "o.py");
    writeFileSync(outside, MESSY);
    const skipped = await updated(hook, {
      args: { filePath: "../outside/o.py" },
      result: {
        success: true,
      },
    });
    assert.equal((skipped as Formatted).autoFormat?.status, "skipped");
    assert.equal(
      (skipped as Formatted).autoFormat?.reason,
      `File is outside ${box.ws}: ../outside/o.py`,
    );
    assert.equal(readFileSync(outside, "utf8"), MESSY);
    assert.throws(() => autoFormat({ cwd: box.ws, formatters: { ".py": [] } }), TypeError);
  });

  it("autoFormat() as an editor post hook formats what the editor wrote", async () => {
    const toolkit = new CodingToolkit({ workspaceRoot: box.ws, tools: ["reader", "editor"] });
    toolkit.spec.post(
      "editor",
      autoFormat({
        cwd: box.ws,
        effectsDir: box.effectsDir,
        sandbox: SANDBOX,
        formatters: { ".py": ["node", formatter] },
      }),
    );
    const manager = managerFor(box.ws, toolkit);
    const result = await run(manager, "editor", {
      action: "write",
      filePath: "pkg/new.py",
      content: MESSY,
    }) as Formatted;
    assert.equal(result.success, true);
    assert.equal(result.autoFormat?.status, "formatted");
    assert.equal(read("pkg/new.py"), CLEAN);
  });

  it("autoFormat() never writes formatter output that went over its cap", async () => {
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      formatters: { ".py": ["node", formatter, "--flood"] },
    });
    const file = write("flood.py", MESSY);
    const result = await updated(hook, { args: { filePath: file }, result: { success: true } });
    assert.equal((result as Formatted).autoFormat?.status, "failed");
    assert.equal(
      (result as Formatted).autoFormat?.reason,
      "Formatter output exceeded 20000000 bytes",
    );
    assert.equal(read(file), MESSY);
  });

  it("autoFormat() refuses a symlink and a file whose real path leaves cwd", async () => {
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      formatters: { ".py": ["node", formatter] },
    });
    const victim = join(box.outside, "victim.py");
    writeFileSync(victim, MESSY);
    symlinkSync(victim, join(box.ws, "link.py"));
    mkdirSync(join(box.outside, "dir"));
    writeFileSync(join(box.outside, "dir", "deep.py"), MESSY);
    symlinkSync(join(box.outside, "dir"), join(box.ws, "linkdir"));
    const viaLink = await updated(hook, {
      args: { filePath: "link.py" },
      result: { success: true },
    });
    assert.equal((viaLink as Formatted).autoFormat?.status, "failed");
    assert.equal(
      (viaLink as Formatted).autoFormat?.reason,
      "Refusing to format a symlink: link.py",
    );
    const viaDir = await updated(hook, {
      args: { filePath: "linkdir/deep.py" },
      result: {
        success: true,
      },
    });
    assert.equal((viaDir as Formatted).autoFormat?.status, "skipped");
    assert.equal(
      (viaDir as Formatted).autoFormat?.reason,
      `File is outside ${box.ws}: linkdir/deep.py`,
    );
    assert.equal(readFileSync(victim, "utf8"), MESSY);
    assert.equal(readFileSync(join(box.outside, "dir", "deep.py"), "utf8"), MESSY);
  });

  it("autoFormat() does not overwrite a change made while the formatter ran", async () => {
    const file = write("raced.py", MESSY);
    // The formatter itself changes the file, so it must run on the host (in the sandbox the
    // workspace is read-only for formatters: see the sandbox test below).
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: { kind: "none" },
      formatters: { ".py": ["node", formatter, "--append", join(box.ws, file)] },
    });
    const result = await updated(hook, { args: { filePath: file }, result: { success: true } });
    assert.equal((result as Formatted).autoFormat?.status, "failed");
    assert.equal(
      (result as Formatted).autoFormat?.reason,
      `File changed while formatting: ${file}`,
    );
    assert.equal(read(file), `${MESSY}# changed meanwhile\n`);
  });

  it("autoFormat() resolves a relative cwd against the process's directory", async () => {
    const cwd = relative(process.cwd(), box.ws);
    const hook = autoFormat({
      cwd,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      formatters: { ".py": ["node", formatter] },
    });
    const file = write("relative.py", MESSY);
    const result = await updated(hook, { args: { filePath: file }, result: { success: true } });
    assert.equal((result as Formatted).autoFormat?.status, "formatted");
    assert.equal(read(file), CLEAN);
  });

  it("autoFormat() rejects a bad timeoutMs or cwd with a TypeError", () => {
    for (const timeoutMs of [0, -1, Number.NaN, Infinity, "5" as unknown as number]) {
      assert.throws(() => autoFormat({ cwd: box.ws, timeoutMs }), {
        name: "TypeError",
        message: `Cannot create autoFormat hook: timeoutMs must be a positive number, got ${
          String(timeoutMs)
        }`,
      });
    }
    // A timer fires a longer delay at once: every run had "timed out".
    assert.throws(() => autoFormat({ cwd: box.ws, timeoutMs: 3e9 }), {
      name: "TypeError",
      message:
        "Cannot create autoFormat hook: timeoutMs must be at most 2147483647 (about 24.8 days), got 3000000000",
    });
    for (const cwd of ["", "a\0b", 7 as unknown as string, undefined as unknown as string]) {
      assert.throws(() => autoFormat({ cwd }), {
        name: "TypeError",
        message: /^Cannot create autoFormat hook: cwd \(the workspace root\) is required, got /,
      });
    }
    assert.throws(() => autoFormat(undefined as never), TypeError);
    assert.throws(() => autoFormat({} as never), TypeError);
    assert.throws(
      () => autoFormat({ cwd: box.ws, sandbox: { kind: "docker" as "none" } }),
      { name: "TypeError", message: /sandbox\.kind must be/ },
    );
  });

  it("autoFormat() refuses a hard link whose other name is outside the workspace", async () => {
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: SANDBOX,
      formatters: { ".py": ["node", formatter] },
    });
    const victim = join(box.outside, "hard-victim.py");
    writeFileSync(victim, MESSY);
    linkSync(victim, join(box.ws, "hard.py"));
    const result = await updated(hook, {
      args: { filePath: "hard.py" },
      result: { success: true },
    });
    assert.equal((result as Formatted).autoFormat?.status, "failed");
    assert.equal(
      (result as Formatted).autoFormat?.reason,
      "Refusing to format a file with more than one link: hard.py",
    );
    assert.equal(readFileSync(victim, "utf8"), MESSY);
  });

  it("autoFormat() runs the formatter in the sandbox: the workspace is read-only to it (unstaged)", async () => {
    const file = write("sandboxed.py", MESSY);
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: { readable: [dirname(formatter)] },
      formatters: { ".py": ["node", formatter, "--append", join(box.ws, file)] },
    });
    const result = await updated(hook, { args: { filePath: file }, result: { success: true } });
    const record = (result as Formatted).autoFormat;
    if (!bwrapMayRun) {
      // Deno without run permission for bwrap: the default (sandboxed) hook does not run at all.
      assert.equal(record?.status, "skipped");
      assert.match(String(record?.reason), /^Deno run permission for "bwrap" is not granted/);
    } else if ((record as { effects?: string }).effects === "overlay") {
      // Staged (this file run with every permission): the formatter may write, into its
      // copy-on-write view; the file gets its output (auto_format_staged_test.ts has the rest).
      assert.equal(record?.status, "formatted", JSON.stringify(record));
      assert.equal(read(file), CLEAN);
      return;
    } else {
      assert.equal(record?.status, "failed");
      assert.match(String(record?.reason), /^Formatter exited with code 1: [\s\S]*EROFS/);
      assert.equal((record as { sandbox?: string }).sandbox, "bubblewrap");
    }
    assert.equal(read(file), MESSY);
  });

  it("autoFormat() skips with SandboxUnavailableError's message when bubblewrap is missing", async () => {
    const file = write("nosandbox.py", MESSY);
    const hook = autoFormat({
      cwd: box.ws,
      effectsDir: box.effectsDir,
      sandbox: { bwrapPath: "/nonexistent/hookscope/bwrap" },
      formatters: { ".py": ["node", formatter] },
      canRun: () => ({ granted: true }),
    });
    const result = await updated(hook, { args: { filePath: file }, result: { success: true } });
    const record = (result as Formatted).autoFormat;
    assert.equal(record?.status, "skipped");
    assert.match(String(record?.reason), /^Cannot run the formatter without a sandbox: /);
    assert.match(String(record?.reason), /apt-get install bubblewrap/);
    assert.match(String(record?.reason), /sandbox: \{ kind: "none" \}/);
    assert.equal(read(file), MESSY);
  });
});
