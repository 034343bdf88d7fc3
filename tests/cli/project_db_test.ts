// The session database `hookscope hook` and `serve` use without --db, and what opening a database
// in a folder that does not exist says.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openOrCreateDb, projectDb } from "../../cli/_db.ts";
import { CliError } from "../../cli/_output.ts";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-project-db-"));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("projectDb()", () => {
  it("makes .hookscope/ in a fresh project, with a .gitignore that ignores everything in it", () => {
    const project = tempDir();
    assert.equal(projectDb(project), join(project, ".hookscope", "sessions.db"));
    assert.ok(existsSync(join(project, ".hookscope")));
    assert.match(readFileSync(join(project, ".hookscope", ".gitignore"), "utf8"), /^\*$/m);
  });

  it("leaves an existing .hookscope/ as it is (no .gitignore written into it)", () => {
    const project = tempDir();
    projectDb(project);
    writeFileSync(join(project, ".hookscope", ".gitignore"), "mine\n");
    projectDb(project);
    assert.equal(readFileSync(join(project, ".hookscope", ".gitignore"), "utf8"), "mine\n");
  });
});

describe("openOrCreateDb()", () => {
  it("refuses a file in a folder that does not exist, naming the folder and what to do", async () => {
    const folder = join(tempDir(), "no-such-folder");
    await assert.rejects(
      openOrCreateDb(join(folder, "sessions.db")),
      (error: Error) =>
        error instanceof CliError &&
        error.message.includes(`its folder ${JSON.stringify(folder)} does not exist`) &&
        /create it/.test(error.message),
    );
    assert.equal(existsSync(folder), false);
  });
});
