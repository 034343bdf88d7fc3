import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { Workspace, WorkspaceError } from "../../../action/coding/_workspace.ts";
import { makeSandbox, type Sandbox } from "./_helpers.ts";

describe("Workspace.resolve", () => {
  let box: Sandbox;
  before(() => {
    box = makeSandbox();
    symlinkSync(join(box.outside, "secret.txt"), join(box.ws, "link-to-secret"));
    symlinkSync(box.outside, join(box.ws, "dir-link"));
    symlinkSync(join(box.ws, "src"), join(box.ws, "src-link"));
    symlinkSync(join(box.base, "missing"), join(box.ws, "dangling"));
  });
  after(() => box.cleanup());

  it("Workspace.resolve() returns a path inside the real root or refuses (property)", async () => {
    const workspace = new Workspace(box.ws, "/");
    const root = realpathSync(box.ws);
    const segment = fc.constantFrom(
      "..",
      ".",
      "",
      "src",
      "src-link",
      "dir-link",
      "link-to-secret",
      "dangling",
      "ws",
      "ws-evil",
      "outside",
      "secret.txt",
      "main.py",
      "new",
      "a\0b",
      "weird;name.py",
      box.base,
      "/",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), async (parts) => {
        const raw = parts.join("/");
        try {
          const path = await workspace.resolve(raw);
          assert.ok(path === root || path.startsWith(`${root}/`), `${raw} -> ${path}`);
        } catch (error) {
          assert.ok(error instanceof WorkspaceError, `${raw}: ${error}`);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("Workspace.resolve() follows symlinks that stay inside", async () => {
    const workspace = new Workspace(box.ws, "/");
    assert.equal(
      await workspace.resolve("src-link/main.py"),
      join(realpathSync(box.ws), "src", "main.py"),
    );
    await assert.rejects(workspace.resolve(""), { message: "'path' is required" });
  });
});
