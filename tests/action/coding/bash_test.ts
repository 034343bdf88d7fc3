import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { makeSandbox, managerFor, run, type Sandbox } from "./_helpers.ts";
import { ActionManager, AgentSpec } from "../../../action/mod.ts";
import { CodingToolkit } from "../../../action/coding/mod.ts";
import { Branch } from "../../../session/mod.ts";

describe("CodingToolkit bash", () => {
  let box: Sandbox;
  let manager: ActionManager;
  before(() => {
    box = makeSandbox();
    manager = managerFor(box.ws);
  });
  after(() => box.cleanup());

  it("bash runs argv without a shell, keeping quoted words intact", async () => {
    const result = await run(manager, "bash", {
      command:
        `node -e "console.log(JSON.stringify(process.argv.slice(1)))" 'a b' "c\\"d" e\\ f '$HOME' \\* # x`,
    });
    assert.equal(result.success, true, JSON.stringify(result));
    assert.equal(result.returnCode, 0);
    assert.equal(result.timedOut, false);
    assert.deepEqual(JSON.parse(String(result.stdout)), ["a b", 'c"d', "e f", "$HOME", "*"]);
    const quoted = await run(manager, "bash", { command: "echo 'quoted; not a list'" });
    assert.equal(quoted.stdout, "quoted; not a list\n");
  });

  it("bash runs in the workspace root by default and in a cwd inside it", async () => {
    mkdirSync(join(box.ws, "sub"), { recursive: true });
    const root = await run(manager, "bash", { command: `node -e "console.log(process.cwd())"` });
    assert.equal(String(root.stdout).trim(), box.ws);
    const sub = await run(manager, "bash", {
      command: `node -e "console.log(process.cwd())"`,
      cwd: "sub",
    });
    assert.equal(String(sub.stdout).trim(), join(box.ws, "sub"));
    const escape = await run(manager, "bash", { command: "ls", cwd: "../outside" });
    assert.equal(escape.returnCode, -1);
    assert.equal(escape.stderr, "Path escapes workspace root: ../outside");
  });

  it("with effects direct, bash refuses ; && || | & backticks $( $x globs < > and newlines with returnCode -1", async () => {
    const direct = managerFor(
      box.ws,
      new CodingToolkit({ workspaceRoot: box.ws, sandbox: { effects: "direct" } }),
    );
    const cases: [string, string][] = [
      ["echo a; echo b", "more than one command (;, & or a newline)"],
      ["echo a && echo b", "a command list (&& or ||)"],
      ["false || echo b", "a command list (&& or ||)"],
      ["ls | wc -l", "a pipeline (|)"],
      ["ls -la & echo b", "more than one command (;, & or a newline); a background job (&)"],
      ["echo `id`", "a command substitution ($(…) or `…`)"],
      ["echo $(id)", "a command substitution ($(…) or `…`)"],
      ["echo $HOME", "a parameter expansion ($NAME)"],
      ["ls *", "a glob or brace pattern (*)"],
      ["cat < /etc/passwd", "a redirection (<, >, >>, here-document)"],
      ["echo x > out.txt", "a redirection (<, >, >>, here-document)"],
      ["echo a\necho b", "more than one command (;, & or a newline)"],
    ];
    const why =
      ". The bash tool runs one command as argv, without a shell: run each command in its own call and quote words meant literally";
    for (const [command, op] of cases) {
      const result = await run(direct, "bash", { command });
      assert.equal(result.success, false, command);
      assert.equal(result.returnCode, -1, command);
      assert.equal(result.timedOut, false);
      assert.equal(result.stdout, "");
      assert.equal(result.stderr, `Shell syntax is not supported: ${op}${why}`, command);
    }
  });

  it("bash reports malformed quoting, a missing program and a failing exit code", async () => {
    const direct = managerFor(
      box.ws,
      new CodingToolkit({ workspaceRoot: box.ws, sandbox: { effects: "direct" } }),
    );
    const malformed = await run(direct, "bash", { command: `echo "open` });
    assert.equal(malformed.stderr, 'Malformed command: syntax error near "\\"open"');
    assert.equal(malformed.returnCode, -1);
    // With effects on, a real shell reads it and says what is wrong.
    const shell = await run(manager, "bash", { command: `echo "open` });
    assert.equal(shell.returnCode, 2);
    assert.match(String(shell.stderr), /unexpected EOF/);
    const missing = await run(manager, "bash", { command: "hookscope-no-such-program --x" });
    assert.equal(missing.stderr, "Command not found: hookscope-no-such-program");
    assert.equal(missing.returnCode, -1);
    const failing = await run(manager, "bash", { command: `node -e "process.exit(7)"` });
    assert.equal(failing.success, false);
    assert.equal(failing.returnCode, 7);
  });

  it("bash stops a hanging command at its deadline", async () => {
    const started = Date.now();
    const result = await run(manager, "bash", {
      command: `node -e "setTimeout(function () {}, 60000)"`,
      timeoutMs: 300,
    });
    assert.equal(result.timedOut, true);
    assert.equal(result.returnCode, -1);
    assert.equal(result.success, false);
    assert.match(String(result.stderr), /Command timed out after 0\.3s$/);
    assert.ok(Date.now() - started < 30_000, "the process was not left to finish");
  });

  it("bash kills the whole process group at the deadline", async () => {
    // sh starts a background sleeper that holds stdout open; only a group kill ends it. The
    // call returns after at most 2 s even when the group survives, so the test looks for the
    // sleeper itself (by its unique argument) instead of timing the call.
    const started = Date.now();
    const result = await run(manager, "bash", {
      command: `sh -c "sleep 40.4242 & exec sleep 41.4242"`,
      timeoutMs: 300,
    });
    assert.equal(result.timedOut, true);
    assert.ok(Date.now() - started < 30_000, "the background child did not keep the call alive");
    const alive = (): boolean | null => {
      try {
        execFileSync("pgrep", ["-f", "sleep 40.4242"], { stdio: "ignore" });
        return true;
      } catch (error) {
        // pgrep exits 1 when nothing matches; anything else means it cannot tell (no pgrep).
        return (error as { status?: number }).status === 1 ? false : null;
      }
    };
    let state = alive();
    for (let i = 0; state === true && i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = alive();
    }
    assert.notEqual(state, true, "the background sleeper outlived the deadline");
  });

  it("bash caps each output stream at 100 000 bytes with a marker", async () => {
    const result = await run(manager, "bash", {
      command:
        `node -e "process.stdout.write('o'.repeat(3000000)), process.stderr.write('e'.repeat(150000))"`,
    });
    assert.equal(result.returnCode, 0);
    const stdout = String(result.stdout);
    const stderr = String(result.stderr);
    assert.equal(stdout.slice(0, 100_000), "o".repeat(100_000));
    assert.equal(stdout.slice(100_000), "\n[output truncated: 2900000 more bytes not shown]");
    assert.equal(stderr.slice(100_000), "\n[output truncated: 50000 more bytes not shown]");
  });

  it("bash clamps the deadline to 1..300000 ms", async () => {
    const { clampTimeout } = await import("../../../action/coding/_bash.ts");
    assert.equal(clampTimeout(undefined), 30_000);
    assert.equal(clampTimeout(0), 1);
    assert.equal(clampTimeout(-5), 1);
    assert.equal(clampTimeout(10_000_000), 300_000);
    assert.equal(clampTimeout(Number.NaN), 30_000);
  });

  it("bash kills the command when the caller aborts", async () => {
    const controller = new AbortController();
    const pending = manager.invoke(
      { function: "bash", arguments: { command: `node -e "setTimeout(function () {}, 60000)"` } },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(new DOMException("stop", "AbortError")), 200);
    await assert.rejects(pending, { name: "AbortError" });
  });
});

describe("CodingToolkit spec and bind", () => {
  let box: Sandbox;
  before(() => {
    box = makeSandbox();
  });
  after(() => box.cleanup());

  it("new CodingToolkit({ spec }) runs that spec's hooks, also ones added later", async () => {
    const seen: string[] = [];
    const spec = new AgentSpec().pre("bash", ({ toolName: tool, args }) => {
      seen.push(`pre ${tool} ${String(args.command)}`);
      return { decision: "allow", updatedArgs: args };
    });
    const toolkit = new CodingToolkit({
      workspaceRoot: box.ws,
      effectsDir: box.effectsDir,
      tools: ["bash"],
      spec,
    });
    assert.equal(toolkit.spec, spec);
    const manager = new ActionManager();
    const tools = toolkit.bind(manager);
    assert.deepEqual(tools.map((tool) => tool.name), ["bash"]);
    assert.equal(manager.get("bash"), tools[0]);
    spec.post("*", ({ result }) => ({ updatedResult: { ...(result as object), tagged: true } }));
    const result = await run(manager, "bash", { command: "echo hi" });
    assert.equal(result.stdout, "hi\n");
    assert.equal(result.tagged, true);
    assert.deepEqual(seen, ["pre bash echo hi"]);
  });

  it("the toolkit's hooks live on its spec (its own, or the one it was given)", async () => {
    const toolkit = new CodingToolkit({
      workspaceRoot: box.ws,
      effectsDir: box.effectsDir,
      tools: ["bash"],
    });
    assert.equal("pre" in toolkit, false);
    toolkit.spec.post("bash", ({ result }) => ({
      updatedResult: { ...(result as object), own: true },
    }));
    const shared = new AgentSpec();
    const other = new CodingToolkit({
      workspaceRoot: box.ws,
      effectsDir: box.effectsDir,
      tools: ["bash"],
      spec: shared,
    });
    shared.post("bash", ({ result }) => ({
      updatedResult: { ...(result as object), shared: true },
    }));
    assert.equal(other.spec, shared);
    assert.notEqual(toolkit.spec, shared);
    const mine = await run(managerFor(box.ws, toolkit), "bash", { command: "echo a" });
    assert.equal(mine.own, true);
    assert.equal(mine.shared, undefined);
  });

  it("bind() registers on an ActionManager or a Branch's actions; anything else is a TypeError", () => {
    const toolkit = new CodingToolkit({ workspaceRoot: box.ws, tools: ["reader", "search"] });
    const branch = new Branch();
    const tools = toolkit.bind(branch);
    assert.deepEqual(branch.actions.tools.map((tool) => tool.name), ["reader", "search"]);
    assert.equal(branch.actions.get("reader"), tools[0]);
    assert.deepEqual(toolkit.bind().map((tool) => tool.name), ["reader", "search"]);
    assert.deepEqual(toolkit.tools().map((tool) => tool.name), ["reader", "search"]);
    for (const bad of [{}, { actions: {} }, { register: 1 }]) {
      assert.throws(() => toolkit.bind(bad as never), {
        name: "TypeError",
        message: "Cannot bind coding tools: target must be an ActionManager or a Branch",
      });
    }
    assert.throws(() => new CodingToolkit({ spec: {} as never }), {
      name: "TypeError",
      message: "Cannot create coding toolkit: spec must be an AgentSpec",
    });
  });
});
