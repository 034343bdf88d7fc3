import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import * as grammar from "../../../action/coding/_wasm_bash_grammar.ts";
import * as runtime from "../../../action/coding/_wasm_tree_sitter.ts";
import { decodeEmbeddedWasm, EmbeddedAssetError } from "../../../action/coding/_wasm_bytes.ts";
import { loadShellParser } from "../../../action/coding/_shell_parse.ts";

const modules = new URL("../../../node_modules/", import.meta.url);

async function installed(
  pkg: string,
  file: string,
): Promise<{ bytes: Uint8Array; version: string }> {
  const dir = new URL(`${pkg}/`, modules);
  const bytes = new Uint8Array(await readFile(new URL(file, dir)));
  const { version } = JSON.parse(await readFile(new URL("package.json", dir), "utf8"));
  return { bytes, version };
}

describe("embedded WebAssembly of the shell parser", () => {
  it("decodes to exactly the bytes of the installed tree-sitter-bash grammar", async () => {
    const { bytes, version } = await installed("tree-sitter-bash", "tree-sitter-bash.wasm");
    assert.equal(grammar.VERSION, version, "run scripts/embed_wasm.ts after an upgrade");
    assert.deepEqual(await decodeEmbeddedWasm(grammar), bytes);
  });

  it("decodes to exactly the runtime wasm of the web-tree-sitter version the code imports", async () => {
    const { bytes, version } = await installed("web-tree-sitter", "web-tree-sitter.wasm");
    assert.equal(runtime.VERSION, version, "the Emscripten glue and its wasm must match");
    assert.deepEqual(await decodeEmbeddedWasm(runtime), bytes);
    const pinned = JSON.parse(
      await readFile(new URL("../../../package.json", import.meta.url), "utf8"),
    );
    assert.equal(pinned.dependencies["web-tree-sitter"], runtime.VERSION);
    const deno = JSON.parse(await readFile(new URL("../../../deno.json", import.meta.url), "utf8"));
    assert.equal(deno.imports["web-tree-sitter"], `npm:web-tree-sitter@${runtime.VERSION}`);
  });

  it("refuses bytes whose digest does not match, with a specific error", async () => {
    const tampered = { ...grammar, SHA256: "0".repeat(64) };
    await assert.rejects(decodeEmbeddedWasm(tampered), (error: unknown) => {
      assert.ok(error instanceof EmbeddedAssetError);
      assert.match(error.message, /tree-sitter-bash@.*SHA-256 is [0-9a-f]{64}, expected 0{64}/);
      return true;
    });
  });

  it("loads the parser without reading node_modules (the bytes come from the module graph)", async () => {
    const parse = await loadShellParser();
    const parsed = parse("ls -la | grep x");
    assert.deepEqual(parsed.commands.map((c) => c.words.map((w) => w.value)), [
      ["ls", "-la"],
      ["grep", "x"],
    ]);
  });
});
