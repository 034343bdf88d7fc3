import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { main } from "../../cli/main.ts";
import { parseFlags, requirePositionals } from "../../cli/_args.ts";
import { UsageError } from "../../cli/_output.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
// A real SQLite file written by another application (tables `users` and `sessions`).
const OTHER_APP_DB = join(ROOT, "tests", "fixtures", "other_app.sqlite");

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-cli-args-"));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("hookscope usage errors", () => {
  it('show DB "" is a usage error (exit 2) naming SESSION, without a stack trace', async () => {
    const result = await run(["show", OTHER_APP_DB, ""]);
    assert.equal(result.code, 2);
    assert.match(result.err, /hookscope show: SESSION must not be empty/);
    assert.doesNotMatch(result.err, /\n\s+at /);
    assert.doesNotMatch(result.err, /unexpected failure/);
  });

  it('show "" SESSION and sessions "" are usage errors naming DB', async () => {
    const show = await run(["show", "", "s1"]);
    assert.equal(show.code, 2);
    assert.match(show.err, /hookscope show: DB must not be empty/);
    const sessions = await run(["sessions", "  "]);
    assert.equal(sessions.code, 2);
    assert.match(sessions.err, /hookscope sessions: DB must not be empty/);
  });

  it("a wrong number of positionals says what was expected", async () => {
    const show = await run(["show", "only.db"]);
    assert.equal(show.code, 2);
    assert.match(show.err, /expected DB and SESSION; got 1 argument;/);
    const sessions = await run(["sessions"]);
    assert.equal(sessions.code, 2);
    assert.match(sessions.err, /expected DB; got 0 arguments;/);
  });

  it("requirePositionals() accepts exactly the named, non-empty arguments (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 4 }), (values) => {
        const names = ["A", "B"];
        const ok = values.length === 2 && values.every((v) => v.trim().length > 0);
        if (ok) assert.deepEqual(requirePositionals("x", values, names), values);
        else assert.throws(() => requirePositionals("x", values, names), UsageError);
      }),
    );
  });
});

describe("hookscope -h", () => {
  for (const command of ["demo", "run", "sessions", "show", "points"]) {
    it(`${command} -h prints the same help as --help and exits 0`, async () => {
      const short = await run([command, "-h"]);
      const long = await run([command, "--help"]);
      assert.equal(short.code, 0, short.err);
      assert.equal(short.err, "");
      assert.equal(short.out, long.out);
      assert.match(short.out, new RegExp(`^Usage: hookscope ${command}`));
      assert.match(short.out, /-h, --help/);
    });
  }

  it("-h and --help at the top level print the command list", async () => {
    const short = await run(["-h"]);
    assert.equal(short.code, 0);
    assert.match(short.out, /^Usage: hookscope <command>/);
    assert.equal(short.out, (await run(["--help"])).out);
  });

  it("parseFlags() maps -h to help and still refuses other unknown short flags", () => {
    assert.equal(parseFlags("x", ["-h"], {}).values.help, true);
    assert.throws(() => parseFlags("x", ["-q"], {}), UsageError);
  });
});

describe("hookscope on a file that is not a hookscope database", () => {
  it("sessions on another application's SQLite file says so and does not advise migrating", async () => {
    const result = await run(["sessions", OTHER_APP_DB]);
    assert.equal(result.code, 1);
    assert.match(result.err, /it is not a hookscope session database/);
    assert.match(result.err, /another application's file/);
    assert.doesNotMatch(result.err, /migrat/i);
  });

  it("show on another application's SQLite file says so too", async () => {
    const result = await run(["show", OTHER_APP_DB, "s1"]);
    assert.equal(result.code, 1);
    assert.match(result.err, /it is not a hookscope session database/);
    assert.doesNotMatch(result.err, /migrat/i);
  });

  it("sessions on a text file or an empty file says it is not a hookscope database", async () => {
    const dir = tempDir();
    const text = join(dir, "notes.db");
    writeFileSync(text, "just some notes\n".repeat(20));
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    const a = await run(["sessions", text]);
    assert.equal(a.code, 1);
    assert.match(a.err, /not a hookscope session database \(not a SQLite file\)/);
    const b = await run(["sessions", empty]);
    assert.equal(b.code, 1);
    assert.match(b.err, /not a hookscope session database \(the file is empty\)/);
  });
});
