// Which strings of an endpoint's configuration are credentials.

/** Header names whose values are credentials whatever their length. */
const CREDENTIAL_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "api-key",
  "x-api-key",
  "x-goog-api-key",
  "openai-api-key",
  "anthropic-api-key",
  "x-auth-token",
  "cookie",
]);

/** Other header values shorter than this are not treated as credentials (`x-retry: 0`). */
const MIN_OTHER_SECRET = 8;

/**
 * The strings `redactSecrets` must remove for an endpoint: the API key, every header value
 * (credential header names at any length, any other header from 8 characters on), the token
 * after an auth scheme, the password inside a Basic credential, and each cookie value.
 */
export function secretsOf(
  apiKey: string | undefined,
  headers: Readonly<Record<string, string>> | undefined,
): string[] {
  const out = new Set<string>();
  const add = (value: string, always: boolean): void => {
    const trimmed = value.trim();
    if (trimmed === "" || (!always && trimmed.length < MIN_OTHER_SECRET)) return;
    out.add(trimmed);
    const scheme = /^(bearer|basic|token|digest|apikey|key)\s+/i.exec(trimmed);
    if (scheme) {
      const token = trimmed.slice(scheme[0].length).trim();
      if (token !== "") out.add(token);
      if (scheme[1].toLowerCase() === "basic") {
        try {
          const decoded = atob(token);
          out.add(decoded);
          const password = decoded.slice(decoded.indexOf(":") + 1);
          if (password !== "") out.add(password);
        } catch {
          // not base64: the token itself is redacted
        }
      }
    }
    if (trimmed.includes("=")) {
      for (const part of trimmed.split(";")) {
        const cookie = part.slice(part.indexOf("=") + 1).trim();
        if (cookie.length >= 4) out.add(cookie);
      }
    }
  };
  if (typeof apiKey === "string") add(apiKey, true);
  if (headers) {
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value === "string") add(value, CREDENTIAL_HEADERS.has(name.toLowerCase()));
    }
  }
  return [...out];
}

/**
 * Why `value` cannot be sent as a header value, or `undefined` when it can. Surrounding
 * whitespace is fine (fetch strips it); the message never contains the value.
 */
export function invalidHeaderValue(value: string): string | undefined {
  const inner = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  for (let i = 0; i < inner.length; i++) {
    const code = inner.charCodeAt(i);
    if (code === 10 || code === 13) return "it contains a line break";
    if (code === 0) return "it contains a NUL character";
    if ((code < 32 && code !== 9) || code === 127) {
      return `it contains the control character U+${code.toString(16).padStart(4, "0")}`;
    }
    if (code > 255) return "it contains a character outside Latin-1";
  }
  return undefined;
}
