import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { redactSecrets } from "../../service/mod.ts";

const KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/+=.~";

/** Every encoding of a credential the redaction must catch. */
export const ENCODINGS: Record<string, (key: string) => string> = {
  raw: (k) => k,
  upper: (k) => k.toUpperCase(),
  lower: (k) => k.toLowerCase(),
  bearer: (k) => `Bearer ${k}`,
  splitNewline: (k) => `${k.slice(0, 5)}\n${k.slice(5)}`,
  splitSpaces: (k) => k.split("").join(k.length % 2 ? " " : "\r\n  "),
  base64: (k) => btoa(k),
  base64Bearer: (k) => btoa(`Bearer ${k}`),
  base64url: (k) => btoa(k).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
  base64urlBearer: (k) =>
    btoa(`Bearer ${k}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
  base64Basic: (k) => btoa(`user:${k}`),
  base64Wrapped: (k) => (btoa(`Bearer ${k}`).match(/.{1,8}/g) ?? []).join("\n"),
  url: (k) => encodeURIComponent(k),
  urlLower: (k) => encodeURIComponent(k).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  urlAll: (k) =>
    k.split("").map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`).join(""),
  jsonSlash: (k) => JSON.stringify(k).slice(1, -1).replace(/\//g, "\\/"),
  jsonUnicode: (k) =>
    k.split("").map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
  htmlNumeric: (k) => k.replace(/[/+=]/g, (c) => `&#${c.charCodeAt(0)};`),
  htmlHex: (k) => k.split("").map((c) => `&#x${c.charCodeAt(0).toString(16)};`).join(""),
  htmlNamed: (k) => k.replace(/\//g, "&sol;").replace(/\+/g, "&plus;").replace(/=/g, "&equals;"),
  jsonOfUrl: (k) => JSON.stringify(encodeURIComponent(k)).slice(1, -1).replace(/%/g, "\\u0025"),
  hex: (k) =>
    Array.from(new TextEncoder().encode(k)).map((b) => b.toString(16).padStart(2, "0")).join(""),
};

const keyArb = fc.string({ unit: fc.constantFrom(...KEY_CHARS), minLength: 12, maxLength: 64 });
const filler = fc.string({ unit: fc.constantFrom(...' abcxyz{}":,\n'), maxLength: 40 });

/** Whether `text` still holds the key in any listed encoding. */
function leaks(text: string, key: string): string | undefined {
  const lower = text.toLowerCase();
  for (const [name, encode] of Object.entries(ENCODINGS)) {
    const encoded = encode(key);
    if (name === "splitNewline" || name === "splitSpaces" || name === "base64Wrapped") continue;
    if (lower.includes(encoded.toLowerCase())) return name;
  }
  if (lower.replace(/\s+/g, "").includes(key.toLowerCase())) return "whitespace-split";
  return undefined;
}

describe("redactSecrets()", () => {
  it("removes a random key in every listed encoding, inside random text", () => {
    fc.assert(
      fc.property(
        keyArb,
        fc.constantFrom(...Object.keys(ENCODINGS)),
        filler,
        filler,
        (key, encoding, before, after) => {
          const text = `${before}${ENCODINGS[encoding](key)}${after}`;
          const clean = redactSecrets(text, [key]);
          assert.equal(leaks(clean, key), undefined, `${encoding} leaked: ${clean}`);
          assert.ok(clean.includes("[redacted]"), `${encoding}: nothing redacted in ${text}`);
          assert.equal(redactSecrets(clean, [key]), clean, "redacting twice changes nothing");
        },
      ),
      { numRuns: 600 },
    );
  });

  it("removes every encoding at once when all are echoed together", () => {
    fc.assert(
      fc.property(keyArb, (key) => {
        const text = Object.values(ENCODINGS).map((encode) => `<${encode(key)}>`).join(" | ");
        const clean = redactSecrets(text, [key]);
        assert.equal(leaks(clean, key), undefined, clean);
      }),
      { numRuns: 200 },
    );
  });

  it("redacts a key given with a trailing newline in its stripped form", () => {
    const key = "sk-trailing/newline+key==";
    const clean = redactSecrets(`echo: Bearer ${key.trim()} end`, [`${key}\n`]);
    assert.equal(clean, "echo: Bearer [redacted] end");
  });

  it("keeps text without secrets unchanged", () => {
    fc.assert(
      fc.property(fc.string(), keyArb, (text, key) => {
        fc.pre(!text.toLowerCase().includes(key.toLowerCase().slice(0, 6)));
        assert.equal(redactSecrets(text, [key]), text);
      }),
      { numRuns: 300 },
    );
    assert.equal(redactSecrets("nothing here", []), "nothing here");
    assert.equal(redactSecrets("nothing here", ["", "   "]), "nothing here");
  });

  it("never throws on arbitrary text and secrets", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.array(fc.string(), { maxLength: 4 }),
        (t, s) => {
          assert.equal(typeof redactSecrets(t, s), "string");
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("OpenAICompatibleEndpoint errors never carry a credential", () => {
  it("random keys and header credentials, echoed in random encodings in a 401 body, status text and a network error", async () => {
    const { OpenAICompatibleEndpoint, EndpointError } = await import("../../service/mod.ts");
    const headerName = fc.constantFrom(
      "api-key",
      "x-api-key",
      "x-goog-api-key",
      "openai-api-key",
      "cookie",
      "x-custom-auth",
    );
    await fc.assert(
      fc.asyncProperty(
        keyArb,
        headerName,
        keyArb,
        fc.array(fc.constantFrom(...Object.keys(ENCODINGS)), { minLength: 1, maxLength: 4 }),
        fc.constantFrom("http", "network"),
        async (key, name, headerSecret, encodings, failure) => {
          const secrets = [key, headerSecret];
          const echo = encodings.flatMap((e) => secrets.map((s) => ENCODINGS[e](s))).join(" ; ");
          const endpoint = new OpenAICompatibleEndpoint({
            baseURL: "http://example.test/v1",
            apiKey: key,
            headers: { [name]: headerSecret },
            fetch: () =>
              failure === "http"
                ? Promise.resolve(
                  new Response(JSON.stringify({ error: { message: echo } }), { status: 401 }),
                )
                : Promise.reject(
                  new TypeError(`connect failed for ${echo}`, { cause: new Error(echo) }),
                ),
          });
          const error = await endpoint.call({ model: "m" }, {
            signal: new AbortController().signal,
          })
            .catch((e) => e);
          assert.ok(error instanceof EndpointError);
          const cause = error.cause as Error | undefined;
          const shown = [
            error.message,
            error.bodyExcerpt,
            String(error),
            error.stack ?? "",
            cause ? `${cause.message} ${cause.stack ?? ""} ${String(cause.cause ?? "")}` : "",
          ].join("\n");
          for (const secret of secrets) {
            assert.equal(leaks(shown, secret), undefined, shown);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("OpenAICompatibleEndpoint credentials at construction", () => {
  it("refuses a key or header value that is not a valid header value, without quoting it", async () => {
    const { OpenAICompatibleEndpoint } = await import("../../service/mod.ts");
    const bad = [
      "sk-left\nright-part",
      "sk-left\r\nright-part",
      "sk-left\0right-part",
      "sk-left\u0001right-part",
      "sk-left\u007fright-part",
      "sk-left\u0100right-part",
    ];
    for (const key of bad) {
      for (
        const make of [
          () => new OpenAICompatibleEndpoint({ baseURL: "http://x.test", apiKey: key }),
          () =>
            new OpenAICompatibleEndpoint({
              baseURL: "http://x.test",
              headers: { "x-api-key": key },
            }),
        ]
      ) {
        assert.throws(make, (error: unknown) => {
          assert.ok(error instanceof TypeError);
          assert.doesNotMatch(error.message, /left|right/);
          assert.match(error.message, /^Cannot create endpoint: invalid (apiKey|headers)/);
          return true;
        });
      }
    }
  });

  it("accepts a key with a trailing newline, sends it stripped and redacts the stripped form", async () => {
    const { OpenAICompatibleEndpoint, EndpointError } = await import("../../service/mod.ts");
    const key = "sk-trailing/Key+value==";
    let sent = "";
    const endpoint = new OpenAICompatibleEndpoint({
      baseURL: "http://x.test",
      apiKey: `${key}\n`,
      fetch: (_url, init) => {
        sent = new Headers(init?.headers).get("authorization") ?? "";
        return Promise.resolve(
          new Response(`bad key ${key} (${btoa(`Bearer ${key}`)})`, { status: 401 }),
        );
      },
    });
    const error = await endpoint.call({ model: "m" }, { signal: new AbortController().signal })
      .catch((e) => e);
    assert.equal(sent, `Bearer ${key}`);
    assert.ok(error instanceof EndpointError);
    assert.equal(error.bodyExcerpt, "bad key [redacted] ([redacted])");
  });
});
