// The bash tool's argv comes from the tree-sitter-bash parse the command guard judges: these
// tests pin its quoting rules, its refusals, and that runner and judge read one command.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import {
  loadShellParser,
  parseRunnable,
  type RunnableCommand,
  ShellParseError,
} from "../../../action/coding/_shell_parse.ts";
import { makeSandbox, managerFor, run, type Sandbox } from "./_helpers.ts";
import { CodingToolkit } from "../../../action/coding/mod.ts";
import { DESTRUCTIVE_COMMANDS, HARMLESS_COMMANDS } from "../../fixtures/command_corpus.ts";

function quote(word: string): string {
  return `'${word.replaceAll("'", `'"'"'`)}'`;
}

async function argv(command: string): Promise<readonly string[]> {
  const runnable: RunnableCommand = await parseRunnable(command);
  assert.ok("argv" in runnable, `${JSON.stringify(command)}: ${JSON.stringify(runnable)}`);
  return runnable.argv;
}

async function refusal(command: string): Promise<string> {
  const runnable = await parseRunnable(command);
  assert.ok("refused" in runnable, `${JSON.stringify(command)}: ${JSON.stringify(runnable)}`);
  return runnable.refused.join("; ");
}

describe("bash argv from the shell parse", () => {
  it("splits words and honours single, double, ANSI-C and backslash quoting", async () => {
    assert.deepEqual(await argv(`  a  'b c' "d \\"e\\" \\$f" g\\ h '' `), [
      "a",
      "b c",
      'd "e" $f',
      "g h",
      "",
    ]);
    assert.deepEqual(await argv(`x"y"'z'`), ["xyz"]);
    assert.deepEqual(await argv(`$'\\x72m' "\\*" \\* '$HOME'`), ["rm", "\\*", "*", "$HOME"]);
    assert.deepEqual(await argv("ls \\\n  -la"), ["ls", "-la"]);
    for (const bad of [`'open`, `"open`, `trailing\\`]) {
      await assert.rejects(parseRunnable(bad), ShellParseError, bad);
    }
    assert.match(await refusal("   "), /no command/);
  });

  it("drops a comment exactly as bash does: find victim # -delete runs find victim", async () => {
    assert.deepEqual(await argv("find victim # -delete"), ["find", "victim"]);
    assert.deepEqual(await argv("find victim #-delete"), ["find", "victim"]);
    assert.deepEqual(await argv("echo a#b \\#c '#d'"), ["echo", "a#b", "#c", "#d"]);
  });

  it("recovers any list of words from their single-quoted form (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string().filter((s) => !s.includes("\0")), { minLength: 1, maxLength: 6 }),
        async (words) => {
          assert.deepEqual(await argv(["echo", ...words.map(quote)].join(" ")), ["echo", ...words]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses lists, pipes, redirections, expansions, globs and tildes, naming each", async () => {
    const cases: [string, RegExp][] = [
      ["echo a; echo b", /more than one command/],
      ["echo a;", /more than one command/],
      ["echo a\necho b", /more than one command/],
      ["echo a && echo b", /command list \(&& or \|\|\)/],
      ["false || echo b", /command list/],
      ["ls | wc -l", /pipeline \(\|\)/],
      ["ls -la & echo b", /background job \(&\)/],
      ["sleep 9 &", /background job/],
      ["echo `id`", /command substitution/],
      ["echo $(id)", /command substitution/],
      ["echo $HOME", /parameter expansion/],
      ['echo "${HOME}"', /parameter expansion/],
      ["cat < /etc/passwd", /redirection/],
      ["echo x > out.txt", /redirection/],
      ["cat <<EOF\nx\nEOF", /redirection/],
      ["FOO=1 env", /variable assignment/],
      ["export FOO=1", /declaration/],
      ["ls *.ts", /glob or brace pattern \(\*\.ts\)/],
      ["echo {a,b}", /glob or brace pattern/],
      ["ls ~", /tilde expansion/],
      ["ls ~/src", /tilde expansion/],
      ["(ls)", /subshell/],
      ["{ ls; }", /group/],
      ["! ls", /negation/],
      ["if true; then ls; fi", /if statement/],
      ["f() { ls; }", /function definition/],
      ["[[ -f x ]]", /test/],
      ["echo $((1+1))", /arithmetic expansion/],
      ["cat <(ls)", /process substitution/],
      ["echo x=~/a", /tilde expansion/],
      ["-- rm -rf victim", /program name starting with -/],
      ["'-a' x rm -rf victim", /program name starting with -/],
    ];
    for (const [command, why] of cases) assert.match(await refusal(command), why, command);
  });

  it("whatever it runs is exactly the one command the judge parsed (property)", async () => {
    const parse = await loadShellParser();
    const chars = fc.constantFrom(
      ..."ab -#'\"\\;&|<>$(){}*?~=\n\t".split(""),
    );
    await fc.assert(
      fc.property(fc.array(chars, { maxLength: 24 }).map((c) => `rm ${c.join("")}`), (source) => {
        let parsed;
        try {
          parsed = parse(source);
        } catch (error) {
          assert.ok(error instanceof ShellParseError, String(error));
          return;
        }
        if (!("argv" in parsed.runnable)) return;
        assert.equal(parsed.commands.length, 1, source);
        assert.deepEqual(parsed.commands[0].words.map((w) => w.value), parsed.runnable.argv);
        assert.ok(parsed.commands[0].words.every((w) => !w.dynamic && !w.pattern), source);
        assert.equal(parsed.redirects.length, 0, source);
      }),
      { numRuns: 500 },
    );
  });
});

describe("bash argv and the command corpus", () => {
  it("for every corpus line the bash tool would run, it runs the words the judge judged", async () => {
    const parse = await loadShellParser();
    let runnable = 0;
    for (const line of [...DESTRUCTIVE_COMMANDS.map((e) => e.command), ...HARMLESS_COMMANDS]) {
      let parsed;
      try {
        parsed = parse(line);
      } catch {
        continue;
      }
      if (!("argv" in parsed.runnable)) continue;
      runnable++;
      assert.equal(parsed.commands.length, 1, line);
      assert.deepEqual(parsed.commands[0].words.map((w) => w.value), parsed.runnable.argv, line);
    }
    assert.ok(runnable >= 250, String(runnable));
  });
});

describe("bash tool runs the judged parse", () => {
  let box: Sandbox;
  before(() => {
    box = makeSandbox();
  });
  after(() => box.cleanup());

  it("find victim # -delete lists victim and deletes nothing (no sandbox, no guard)", async () => {
    mkdirSync(join(box.ws, "victim"), { recursive: true });
    writeFileSync(join(box.ws, "victim", "file"), "precious\n");
    const manager = managerFor(
      box.ws,
      new CodingToolkit({ workspaceRoot: box.ws, sandbox: { kind: "none" } }),
    );
    for (const command of ["find victim # -delete", "find victim -type f #-delete"]) {
      const result = await run(manager, "bash", { command });
      assert.equal(result.success, true, JSON.stringify(result));
      assert.match(String(result.stdout), /victim\/file/);
      assert.ok(existsSync(join(box.ws, "victim", "file")), command);
    }
  });

  it("a refused command says which shell constructs stopped it and runs nothing", async () => {
    const manager = managerFor(
      box.ws,
      new CodingToolkit({ workspaceRoot: box.ws, sandbox: { kind: "none" } }),
    );
    const result = await run(manager, "bash", { command: "touch made && ls | wc -l > n.txt" });
    assert.equal(result.returnCode, -1);
    assert.match(String(result.stderr), /^Shell syntax is not supported: /);
    for (const part of ["a command list (&& or ||)", "a pipeline (|)", "a redirection"]) {
      assert.ok(String(result.stderr).includes(part), part);
    }
    assert.match(String(result.stderr), /runs one command as argv, without a shell/);
    assert.equal(existsSync(join(box.ws, "made")), false);
    assert.equal(existsSync(join(box.ws, "n.txt")), false);
  });
});
