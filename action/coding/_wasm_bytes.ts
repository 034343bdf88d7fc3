/**
 * Decodes a WebAssembly file embedded by `scripts/embed_wasm.ts` (gzip, base64) with web APIs
 * only (`atob`, `DecompressionStream`, `crypto.subtle`), so it works wherever the module graph
 * reaches: a checkout, JSR over https, JSR's npm form, a bundle, a Worker.
 *
 * @module
 */

/** What an embedded module exports. */
export interface EmbeddedWasm {
  readonly PACKAGE: string;
  readonly VERSION: string;
  readonly SHA256: string;
  readonly SIZE: number;
  readonly GZIP_BASE64: readonly string[];
}

/** The embedded bytes could not be decoded, or are not the bytes that were embedded. */
export class EmbeddedAssetError extends Error {
  /** Makes the error. */
  constructor(message: string) {
    super(message);
    this.name = "EmbeddedAssetError";
  }
}

/** Decodes and verifies one embedded WebAssembly file. */
export async function decodeEmbeddedWasm(asset: EmbeddedWasm): Promise<Uint8Array> {
  const label = `${asset.PACKAGE}@${asset.VERSION}`;
  if (typeof DecompressionStream !== "function") {
    throw new EmbeddedAssetError(
      `Cannot decode the embedded ${label} WebAssembly: this runtime has no DecompressionStream`,
    );
  }
  const text = atob(asset.GZIP_BASE64.join(""));
  const packed = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) packed[i] = text.charCodeAt(i);
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  if (bytes.length !== asset.SIZE) {
    throw new EmbeddedAssetError(
      `Cannot use the embedded ${label} WebAssembly: ${bytes.length} bytes, expected ${asset.SIZE}`,
    );
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  if (hex !== asset.SHA256) {
    throw new EmbeddedAssetError(
      `Cannot use the embedded ${label} WebAssembly: its SHA-256 is ${hex}, expected ${asset.SHA256}`,
    );
  }
  return bytes;
}
