import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  destructiveCommandGuard,
  guardDestructive,
  judgeCommand,
} from "../../action/coding/mod.ts";
import { DESTRUCTIVE_COMMANDS, HARMLESS_COMMANDS } from "../fixtures/command_corpus.ts";
import { z } from "zod";
import { Session, Tool, ToolDeniedError, type ToolPreDecision } from "../../mod.ts";
import { reasonOf } from "./_deny_reason.ts";

describe("command guard corpus", () => {
  it("the corpus holds at least 150 destructive and 100 harmless commands, none twice", () => {
    assert.ok(DESTRUCTIVE_COMMANDS.length >= 150, `${DESTRUCTIVE_COMMANDS.length}`);
    assert.ok(HARMLESS_COMMANDS.length >= 100, `${HARMLESS_COMMANDS.length}`);
    const all = [...DESTRUCTIVE_COMMANDS.map((entry) => entry.command), ...HARMLESS_COMMANDS];
    assert.equal(new Set(all).size, all.length);
  });

  it("judgeCommand() denies every destructive command, naming why", async () => {
    const missed: string[] = [];
    for (const entry of DESTRUCTIVE_COMMANDS) {
      const verdict = await judgeCommand(entry.command);
      if (verdict?.decision !== "deny" || verdict.reason === "") {
        missed.push(`${JSON.stringify(entry.command)} (${entry.why})`);
      }
    }
    assert.deepEqual(missed, []);
  });

  it("judgeCommand() asks instead for destructive commands when onDestructive is ask", async () => {
    const unparseable = new Set<string>();
    for (const entry of DESTRUCTIVE_COMMANDS) {
      const verdict = await judgeCommand(entry.command, { onDestructive: "ask" });
      assert.ok(verdict, entry.command);
      if (verdict.decision === "deny") {
        // Only a command that cannot be parsed stays a deny.
        assert.match(verdict.reason, /^cannot parse the command/, entry.command);
        unparseable.add(entry.command);
      } else {
        assert.equal(verdict.decision, "ask", entry.command);
      }
    }
    assert.ok(unparseable.has("rm 'unterminated"));
    assert.ok(unparseable.size < 10, [...unparseable].join(" | "));
  });

  it("judgeCommand() denies no harmless command", async () => {
    const denied: string[] = [];
    for (const command of HARMLESS_COMMANDS) {
      const verdict = await judgeCommand(command);
      if (verdict !== undefined) denied.push(`${JSON.stringify(command)}: ${verdict.reason}`);
    }
    assert.deepEqual(denied, []);
  });

  it("guardDestructive() rejects every destructive command and passes every harmless one", async () => {
    for (const entry of DESTRUCTIVE_COMMANDS) {
      assert.notEqual(
        await reasonOf(guardDestructive({ args: { command: entry.command } })),
        undefined,
        entry.command,
      );
    }
    for (const command of HARMLESS_COMMANDS) {
      assert.equal(await guardDestructive({ args: { command } }), undefined, command);
    }
  });

  it("destructiveCommandGuard() decides on the payload's real args", async () => {
    const guard = destructiveCommandGuard();
    for (const entry of DESTRUCTIVE_COMMANDS.slice(0, 40)) {
      const verdict = await guard({
        toolName: "bash",
        callId: "c",
        args: { command: entry.command },
      });
      assert.equal(verdict?.decision, "deny", entry.command);
    }
    for (const command of HARMLESS_COMMANDS.slice(0, 40)) {
      assert.equal(await guard({ toolName: "bash", callId: "c", args: { command } }), undefined);
    }
  });
});

describe("command guard on the session act path", () => {
  function setup() {
    const session = new Session();
    const branch = session.newBranch();
    const ran: string[] = [];
    branch.actions.register(
      new Tool({
        name: "bash",
        inputSchema: z.object({ command: z.string() }),
        execute: (args: { command: string }) => {
          ran.push(args.command);
          return "ran";
        },
      }),
    );
    return { session, branch, ran };
  }

  it("destructiveCommandGuard() denies on the real args (a long harmless prefix hides nothing)", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", destructiveCommandGuard());
    const command = `echo ${"x".repeat(400)} && rm -r victim`;
    await assert.rejects(branch.act({ function: "bash", arguments: { command } }), (error) => {
      assert.ok(error instanceof ToolDeniedError);
      assert.match(error.reason, /recursive delete/);
      return true;
    });
    await branch.act({ function: "bash", arguments: { command: "git status" } });
    assert.deepEqual(ran, ["git status"]);
  });

  it("destructiveCommandGuard({ onDestructive: 'ask' }) composes with approvals", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", destructiveCommandGuard({ onDestructive: "ask" }));
    const asked: string[] = [];
    await branch.act({ function: "bash", arguments: { command: "git push --force" } }, {
      approve: (pending) => {
        asked.push(String(pending.reason));
        return true;
      },
    });
    assert.deepEqual(ran, ["git push --force"]);
    assert.match(asked[0], /git push rewrites/);
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "rm -r x" } }, {
        approve: () => false,
      }),
      ToolDeniedError,
    );
    assert.deepEqual(ran, ["git push --force"]);
    // The verdicts are ToolPreDecision values.
    const verdict: ToolPreDecision = await judgeCommand("rm -r x", { onDestructive: "ask" });
    assert.equal(verdict?.decision, "ask");
  });
});

/**
 * Words that carry no quoting, no expansion and no shell syntax. A bare `==` or `=~` is left
 * out: the bash grammar reads it as a test operator and the guard then denies the line as
 * unparseable (a known false positive, see docs/guards.md).
 */
const plainWord = fc.stringMatching(/^[a-zA-Z0-9_.\/,:=+@%][a-zA-Z0-9_.\/,:=+@%-]{0,11}$/)
  .filter((word) =>
    !/^\.\.?$/.test(word) && !word.startsWith("/dev/") && !/^=[=~]/.test(word) &&
    !/^\/(etc|boot|bin|sbin|usr|lib|lib32|lib64|libx32|sys|proc|root|var)(\/|$)/.test(word)
  );

/** Harmless programs whose arguments never make them destructive. */
const HARMLESS_PROGRAMS = [
  "ls",
  "echo",
  "cat",
  "grep",
  "head",
  "tail",
  "wc",
  "sort",
  "uniq",
  "diff",
  "mkdir",
  "touch",
  "stat",
  "file",
  "basename",
  "dirname",
  "printf",
  "date",
  "seq",
  "cargo",
  "make",
  "tsc",
];

describe("command guard properties", () => {
  it("random plain argument words never make judgeCommand deny a harmless program", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...HARMLESS_PROGRAMS),
        fc.array(
          fc.oneof(plainWord, plainWord.map((w) => `-${w}`), plainWord.map((w) => `'${w} x'`)),
          {
            maxLength: 8,
          },
        ),
        async (program, words) => {
          const command = [program, ...words].join(" ");
          const verdict = await judgeCommand(command);
          assert.equal(verdict, undefined, `${command}: ${verdict?.reason}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("any destructive command stays denied behind any chain of wrappers and lists", async () => {
    const wrappers = ["sudo", "env", "nohup", "timeout 5", "nice -n 2", "command", "exec", "time"];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...wrappers), { maxLength: 5 }),
        fc.constantFrom(
          ...DESTRUCTIVE_COMMANDS.filter((e) => e.local && !/[\n<>]/.test(e.command)),
        ),
        fc.constantFrom("", "ls && ", "true; ", "echo x | "),
        async (chain, entry, prefix) => {
          const command = `${prefix}${[...chain, `sh -c ${quote(entry.command)}`].join(" ")}`;
          const verdict = await judgeCommand(command);
          assert.equal(verdict?.decision, "deny", command);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("arbitrary text never makes judgeCommand throw", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), async (text) => {
        const verdict = await judgeCommand(text);
        assert.ok(verdict === undefined || verdict.decision === "deny");
      }),
      { numRuns: 300 },
    );
  });
});

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
