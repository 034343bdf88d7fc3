import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CodingToolkit } from "../../../action/coding/mod.ts";
import { makeSandbox, managerFor, run, type Sandbox } from "./_helpers.ts";

describe("CodingToolkit reader and editor", () => {
  let box: Sandbox;
  before(() => {
    box = makeSandbox();
  });
  after(() => box.cleanup());

  it("reader reads with line numbers, offset and limit", async () => {
    const manager = managerFor(box.ws);
    writeFileSync(join(box.ws, "lines.txt"), "a\nb\nc\nd\n");
    const all = await run(manager, "reader", { action: "read", path: "lines.txt" });
    assert.equal(all.content, "1\ta\n2\tb\n3\tc\n4\td");
    assert.equal(all.totalLines, 4);
    const part = await run(manager, "reader", {
      action: "read",
      path: "lines.txt",
      offset: 1,
      limit: 2,
    });
    assert.equal(part.content, "2\tb\n3\tc");
    assert.equal(part.shown, 2);
  });

  it("reader lists a directory and refuses binary files, directories and empty paths", async () => {
    const manager = managerFor(box.ws);
    writeFileSync(join(box.ws, "blob.bin"), new Uint8Array([1, 0, 2]));
    const listing = await run(manager, "reader", { action: "list_dir", path: "." });
    assert.ok((listing.entries as string[]).includes("src/"));
    assert.ok((listing.entries as string[]).includes("blob.bin"));
    assert.deepEqual(await run(manager, "reader", { action: "read", path: "blob.bin" }), {
      success: false,
      error: "Binary file not supported: blob.bin",
    });
    assert.equal(
      (await run(manager, "reader", { action: "read", path: "src" })).error,
      "Is a directory: src (use list_dir)",
    );
    assert.equal(
      (await run(manager, "reader", { action: "read", path: "" })).error,
      "'path' is required",
    );
    assert.equal(
      (await run(manager, "reader", { action: "read", path: "nope.txt" })).error,
      "File not found: nope.txt",
    );
  });

  it("reader rejects an unknown action through the schema", async () => {
    const manager = managerFor(box.ws);
    await assert.rejects(
      manager.invoke({ function: "reader", arguments: { action: "open", path: "x" } }),
      {
        name: "ToolArgumentsError",
      },
    );
  });

  it("editor writes new files and creates parent directories", async () => {
    const manager = managerFor(box.ws);
    const result = await run(manager, "editor", {
      action: "write",
      filePath: "new/dir/f.txt",
      content: "x",
    });
    assert.equal(result.success, true);
    assert.equal(result.created, true);
    assert.equal(readFileSync(join(box.ws, "new/dir/f.txt"), "utf8"), "x");
    assert.equal(
      (await run(manager, "editor", { action: "write", filePath: "g.txt" })).error,
      "'content' is required for write",
    );
  });

  it("editor refuses to overwrite a file not read, or changed since the read", async () => {
    const manager = managerFor(box.ws);
    const file = join(box.ws, "keep.txt");
    writeFileSync(file, "original\n");
    assert.deepEqual(
      await run(manager, "editor", { action: "write", filePath: "keep.txt", content: "new" }),
      {
        success: false,
        error: "Must read file before editing: keep.txt",
      },
    );
    await run(manager, "reader", { action: "read", path: "keep.txt" });
    writeFileSync(file, "changed by someone else\n");
    const past = new Date(statSync(file).mtimeMs + 5000);
    utimesSync(file, past, past);
    assert.deepEqual(
      await run(manager, "editor", {
        action: "edit",
        filePath: "keep.txt",
        oldString: "changed",
        newString: "x",
      }),
      {
        success: false,
        error: "File changed since last read: keep.txt. Read it again.",
      },
    );
    assert.equal(readFileSync(file, "utf8"), "changed by someone else\n");
    await run(manager, "reader", { action: "read", path: "keep.txt" });
    const ok = await run(manager, "editor", {
      action: "write",
      filePath: "keep.txt",
      content: "mine\n",
    });
    assert.equal(ok.success, true);
    assert.equal(readFileSync(file, "utf8"), "mine\n");
  });

  it("editor edits exactly one occurrence unless replaceAll", async () => {
    const manager = managerFor(box.ws);
    const file = join(box.ws, "e.txt");
    writeFileSync(file, "one two two $&\n");
    await run(manager, "reader", { action: "read", path: "e.txt" });
    const many = await run(manager, "editor", {
      action: "edit",
      filePath: "e.txt",
      oldString: "two",
      newString: "2",
    });
    assert.equal(
      many.error,
      "old_string appears 2 times in e.txt; add surrounding context to make it unique or set replaceAll.",
    );
    const missing = await run(manager, "editor", {
      action: "edit",
      filePath: "e.txt",
      oldString: "three",
      newString: "3",
    });
    assert.match(String(missing.error), /^old_string not found in e\.txt/);
    const once = await run(manager, "editor", {
      action: "edit",
      filePath: "e.txt",
      oldString: "one",
      newString: "$'",
    });
    assert.equal(once.replacements, 1);
    assert.equal(readFileSync(file, "utf8"), "$' two two $&\n");
    const all = await run(manager, "editor", {
      action: "edit",
      filePath: "e.txt",
      oldString: "two",
      newString: "2",
      replaceAll: true,
    });
    assert.equal(all.replacements, 2);
    assert.equal(readFileSync(file, "utf8"), "$' 2 2 $&\n");
  });

  it("CodingToolkit rejects unknown tool names and reports a missing workspace root as a failure", async () => {
    assert.throws(() => new CodingToolkit({ tools: ["reader", "shell" as "bash"] }), {
      name: "TypeError",
      message:
        'Cannot create coding toolkit: unknown coding tool(s) "shell"; valid: "reader", "editor", "bash", "search"',
    });
    const manager = managerFor(join(box.base, "missing-root"));
    const result = await run(manager, "reader", { action: "read", path: "a" });
    assert.equal(result.success, false);
    assert.match(String(result.error), /^Workspace root is not an accessible directory: /);
  });

  it("CodingToolkit hooks apply with the one lookup order, also when added after bind()", async () => {
    const order: string[] = [];
    const toolkit = new CodingToolkit({ workspaceRoot: box.ws, tools: ["reader"] });
    const manager = managerFor(box.ws, toolkit);
    toolkit.spec
      .post("reader_tool", () => {
        order.push("alias");
      })
      .post("reader", () => {
        order.push("exact");
      })
      .post("*", () => {
        order.push("star");
      })
      .pre("reader", ({ args }) => ({
        decision: "allow",
        updatedArgs: { ...args, path: "src/main.py" },
      }));
    const result = await run(manager, "reader", { action: "read", path: "ignored.txt" });
    assert.equal(result.content, "1\tprint('hi')", JSON.stringify(result));
    assert.deepEqual(order, ["star", "exact", "alias"]);
  });

  it("editor creates a new file exclusively: concurrent creators cannot overwrite unread", async () => {
    const manager = managerFor(box.ws);
    const writers = Array.from(
      { length: 6 },
      (_, i) =>
        run(manager, "editor", {
          action: "write",
          filePath: "race/new.txt",
          content: `writer ${i}\n`,
        }),
    );
    const results = await Promise.all(writers);
    // Exactly one writer creates the file. A writer that starts after the creation finished may
    // overwrite it, since this toolkit wrote (and so knows) the content it replaces; nobody
    // overwrites content it has not seen.
    const creators = results.flatMap((result, i) =>
      result.success && (result as { created?: boolean }).created === true ? [i] : []
    );
    assert.equal(creators.length, 1, JSON.stringify(results));
    const succeeded = results.flatMap((result, i) => result.success ? [i] : []);
    for (const i of succeeded) {
      if (i !== creators[0]) {
        assert.equal((results[i] as { created?: boolean }).created, false, JSON.stringify(results));
      }
    }
    const final = readFileSync(join(box.ws, "race/new.txt"), "utf8");
    assert.ok(succeeded.some((i) => final === `writer ${i}\n`), final);
    // A refused writer names why: the file appeared after its check, it never read the file, or
    // another writer replaced the content it knew (it started after the creation, then lost).
    for (const result of results) {
      if (!result.success) {
        assert.match(
          String(result.error),
          /^(File appeared since it was checked|Must read file before editing|File changed since last read): race\/new\.txt/,
        );
      }
    }
  });

  it("editor sees a same-size change that keeps the modification time", async () => {
    const manager = managerFor(box.ws);
    const file = join(box.ws, "sneaky.txt");
    const when = new Date("2024-01-02T03:04:05Z");
    writeFileSync(file, "alpha\n");
    utimesSync(file, when, when);
    assert.equal(
      (await run(manager, "reader", { action: "read", path: "sneaky.txt" })).success,
      true,
    );
    writeFileSync(file, "omega\n");
    utimesSync(file, when, when);
    const error = "File changed since last read: sneaky.txt. Read it again.";
    assert.deepEqual(
      await run(manager, "editor", { action: "write", filePath: "sneaky.txt", content: "mine\n" }),
      { success: false, error },
    );
    assert.deepEqual(
      await run(manager, "editor", {
        action: "edit",
        filePath: "sneaky.txt",
        oldString: "omega",
        newString: "x",
      }),
      { success: false, error },
    );
    assert.equal(readFileSync(file, "utf8"), "omega\n");
  });
});
