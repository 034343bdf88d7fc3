import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ActionManager, guardPaths, Tool } from "../../../action/mod.ts";
import { codingSpec, CodingToolkit, nodeFileSystem } from "../../../action/coding/mod.ts";
import { GateDeniedError } from "../../../core/mod.ts";
import { makeSandbox, managerFor, run, type Sandbox, snapshot } from "./_helpers.ts";
import { reasonOf } from "../_deny_reason.ts";

describe("Workspace confinement of the coding tools", () => {
  let box: Sandbox;
  let before_: { outside: string[]; evil: string[] };
  before(() => {
    box = makeSandbox();
    symlinkSync(join(box.outside, "secret.txt"), join(box.ws, "link-to-secret"));
    symlinkSync(box.outside, join(box.ws, "dir-link"));
    symlinkSync(join(box.outside, "not-yet.txt"), join(box.ws, "dangling"));
    symlinkSync(join(box.ws, "src", "main.py"), join(box.ws, "inner-link"));
    writeFileSync(join(box.ws, ".env"), "TOKEN=1\n");
    before_ = { outside: snapshot(box.outside), evil: snapshot(box.evil) };
  });
  after(() => box.cleanup());

  const hostile: [string, string][] = [
    ["../outside/secret.txt", "Path escapes workspace root: ../outside/secret.txt"],
    ["src/../../outside/secret.txt", "Path escapes workspace root: src/../../outside/secret.txt"],
    ["../../../../../../etc/passwd", "Path escapes workspace root: ../../../../../../etc/passwd"],
    ["/etc/passwd", "Path escapes workspace root: /etc/passwd"],
    ["../ws-evil/x.txt", "Path escapes workspace root: ../ws-evil/x.txt"],
    ["link-to-secret", "Path escapes workspace root: link-to-secret"],
    ["dir-link/secret.txt", "Path escapes workspace root: dir-link/secret.txt"],
    ["dir-link/new.txt", "Path escapes workspace root: dir-link/new.txt"],
    ["dangling", "Refusing to access symlink: 'dangling'"],
    ["src/a\0b", 'Refusing to access path containing a NUL byte: "src/a\\u0000b"'],
    [".env", "Refusing to access protected path: '.env'"],
    ["keys/ID_RSA", "Refusing to access protected path: 'ID_RSA'"],
  ];

  it("reader and editor refuse every hostile path with its message", async () => {
    const manager = managerFor(box.ws);
    for (const [path, message] of hostile) {
      const read = await run(manager, "reader", { action: "read", path });
      assert.deepEqual(read, { success: false, error: message }, `read ${path}`);
      const write = await run(manager, "editor", {
        action: "write",
        filePath: path,
        content: "pwned",
      });
      assert.deepEqual(write, { success: false, error: message }, `write ${path}`);
      const edit = await run(manager, "editor", {
        action: "edit",
        filePath: path,
        oldString: "outside",
        newString: "pwned",
      });
      assert.equal(edit.success, false, `edit ${path}`);
    }
    assert.equal(
      (await run(manager, "reader", { action: "list_dir", path: "dir-link" })).success,
      false,
    );
  });

  it("deep and chained relative symlinks and look-alike dots do not escape either", async () => {
    const manager = managerFor(box.ws);
    mkdirSync(join(box.ws, "src", "deep", "er"), { recursive: true });
    symlinkSync("../../../../outside", join(box.ws, "src", "deep", "er", "up"));
    symlinkSync("chain-2", join(box.ws, "chain-1"));
    symlinkSync("src/deep/er/up/secret.txt", join(box.ws, "chain-2"));
    for (const path of ["src/deep/er/up/secret.txt", "src/deep/er/up/new.txt", "chain-1"]) {
      const read = await run(manager, "reader", { action: "read", path });
      assert.deepEqual(read, { success: false, error: `Path escapes workspace root: ${path}` });
      const write = await run(manager, "editor", { action: "write", filePath: path, content: "x" });
      assert.deepEqual(write, { success: false, error: `Path escapes workspace root: ${path}` });
      const grep = await run(manager, "search", { action: "grep", pattern: "secret", path });
      assert.equal(grep.success, false, path);
    }
    // U+2024 (one dot leader) and U+FF0E (fullwidth full stop) are names, not "..".
    for (const dots of ["\u2024\u2024", "\uff0e\uff0e"]) {
      const path = `${dots}/outside/secret.txt`;
      assert.deepEqual(await run(manager, "reader", { action: "read", path }), {
        success: false,
        error: `File not found: ${path}`,
      });
    }
  });

  it("the file system outside the workspace is unchanged after the hostile cases", () => {
    assert.deepEqual(snapshot(box.outside), before_.outside);
    assert.deepEqual(snapshot(box.evil), before_.evil);
    assert.equal(existsSync(join(box.outside, "not-yet.txt")), false);
    assert.equal(existsSync(join(box.outside, "new.txt")), false);
  });

  it("symlinks inside the workspace and odd but harmless names are allowed", async () => {
    const manager = managerFor(box.ws);
    const inner = await run(manager, "reader", { action: "read", path: "inner-link" });
    assert.equal(inner.content, "1\tprint('hi')");
    const weird = await run(manager, "editor", {
      action: "write",
      filePath: "src/weird;name.py",
      content: "x = 1\n",
    });
    assert.equal(weird.success, true);
    assert.equal(readFileSync(join(box.ws, "src", "weird;name.py"), "utf8"), "x = 1\n");
  });
});

describe("guardPaths with nodeFileSystem", () => {
  let box: Sandbox;
  before(() => {
    box = makeSandbox();
    symlinkSync(join(box.outside, "secret.txt"), join(box.ws, "link-to-secret"));
    symlinkSync(box.outside, join(box.ws, "dir-link"));
    symlinkSync(join(box.outside, "nothing"), join(box.ws, "dangling-dir"));
    mkdirSync(join(box.ws, "real"), { recursive: true });
  });
  after(() => box.cleanup());

  it("guardPaths() refuses a direct symlink, a symlink via a parent and the prefix sibling", async () => {
    const guard = guardPaths({ allowedPaths: [box.ws], fs: nodeFileSystem });
    const check = (path: string) => guard({ args: { path } });
    assert.equal(
      await reasonOf(check("link-to-secret")),
      "Refusing to access symlink: 'link-to-secret'",
    );
    assert.equal(
      await reasonOf(check("dir-link/secret.txt")),
      "Path not in allowed list: dir-link/secret.txt",
    );
    assert.equal(
      await reasonOf(check("dangling-dir/new.txt")),
      "Refusing to access symlink: 'dangling-dir/new.txt'",
    );
    assert.equal(
      await reasonOf(check(join(box.evil, "x.txt"))),
      `Path not in allowed list: ${join(box.evil, "x.txt")}`,
    );
    assert.equal(
      await reasonOf(check("../ws-evil/x.txt")),
      "Path not in allowed list: ../ws-evil/x.txt",
    );
    assert.equal(await check("src/main.py"), undefined);
    assert.equal(await check("real/new-file.txt"), undefined);
    assert.equal(await check("src/weird;name.py"), undefined);
  });

  it("guardPaths() accepts a root that is itself reached through a symlink", async () => {
    const alias = join(box.base, "ws-alias");
    symlinkSync(box.ws, alias);
    const guard = guardPaths({ allowedPaths: [alias], fs: nodeFileSystem });
    assert.equal(await guard({ args: { path: "src/main.py" } }), undefined);
    assert.equal(
      await reasonOf(guard({ args: { path: "dir-link/secret.txt" } })),
      "Path not in allowed list: dir-link/secret.txt",
    );
  });

  it("codingSpec() without cwd confines paths to the process cwd at call time", async () => {
    const spec = codingSpec({ fs: nodeFileSystem });
    const guard = spec.registered("securityPre", "editor")[0].handler as (
      context: { args: Record<string, unknown> },
    ) => Promise<unknown>;
    assert.equal(await guard({ args: { filePath: "some/new/file.ts" } }), undefined);
    assert.equal(
      await reasonOf(guard({ args: { filePath: box.outside } })),
      `Path not in allowed list: ${box.outside}`,
    );
  });

  it("codingSpec() with nodeFileSystem denies through a spec-carrying ActionManager", async () => {
    const spec = codingSpec({ cwd: box.ws, fs: nodeFileSystem });
    const manager = new ActionManager({ spec });
    for (const tool of new CodingToolkit({ workspaceRoot: box.ws }).bind()) manager.register(tool);
    const denied = await manager.invoke({
      function: "reader",
      arguments: { action: "read", path: "../outside/secret.txt" },
    }, { suppressErrors: true });
    assert.equal(denied.status, "failed");
    const error = denied.execution.error as GateDeniedError;
    assert.ok(error instanceof GateDeniedError);
    assert.equal(error.control, "guardPaths");
    assert.equal(error.message, "guardPaths: Path not in allowed list: ../outside/secret.txt");
    await assert.rejects(
      manager.invoke({ function: "bash", arguments: { command: "rm -rf src" } }),
      (error: GateDeniedError) => error.control === "guardDestructive",
    );
    assert.equal(existsSync(join(box.ws, "src", "main.py")), true);
    const ok = await manager.invoke({
      function: "reader",
      arguments: { action: "read", path: "src/main.py" },
    });
    assert.equal((ok.response as { success: boolean }).success, true);
    const custom = new ActionManager({ spec });
    custom.register(new Tool({ name: "reader_tool", execute: () => "ran" }));
    const viaAlias = await custom.invoke({
      function: "reader_tool",
      arguments: { path: "/etc/passwd" },
    }, { suppressErrors: true });
    assert.equal(viaAlias.status, "failed");
  });
});
