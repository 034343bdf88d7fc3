/**
 * The POSIX `sh` + `curl` forwarder `hookscope hook-forwarder` writes: a Claude Code command hook
 * that POSTs the event on stdin to `hookscope serve` and prints its answer, starting in the time
 * `sh` and `curl` take (no JavaScript runtime). It fails closed as `hook --server` does: when no
 * answer of `serve` comes back (the server is down, slow, answers an HTTP error, or anything but
 * `serve`'s own answer), a `PreToolUse` is denied and a `UserPromptSubmit` blocked with the
 * reason; another event exits 1 (a non-blocking error); input that is not an event exits 2.
 *
 * @module
 */

import { ANSWER_HEADER, ANSWER_HEADER_VALUE, MAX_EVENT_BYTES } from "./_claude_wire.ts";

/** What the script needs. */
export interface ForwarderScriptOptions {
  /** The `serve` URL, its path `/claude/hooks` (checked: see {@linkcode forwarderUrl}). */
  readonly url: string;
  /** Longest wait for the server, in milliseconds (curl's `--max-time`, rounded up to 0.001 s). */
  readonly timeoutMs: number;
  /** The environment variable holding the bearer token, read when the hook runs. */
  readonly tokenEnv?: string;
}

/**
 * The `serve` URL a forwarder script may embed: `http:` or `https:`, the path defaulting to
 * `/claude/hooks`, and only characters that need no quoting in the script or in its JSON answers
 * (an `Error` names the problem otherwise).
 */
export function forwarderUrl(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new Error(`--server must be a URL; got ${JSON.stringify(server)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`--server must be an http: or https: URL; got ${JSON.stringify(server)}`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new Error(`--server must not carry credentials (give --token-env NAME)`);
  }
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/claude/hooks";
  url.hash = "";
  const href = url.href;
  if (!/^[A-Za-z0-9:/.?=&%_~+,;@[\]-]+$/.test(href)) {
    throw new Error(`--server holds characters a forwarder script cannot embed: ${href}`);
  }
  return href;
}

/** The script's text. `options.url` must come from {@linkcode forwarderUrl}. */
export function forwarderScript(options: ForwarderScriptOptions): string {
  const url = options.url;
  if (forwarderUrl(url) !== url) throw new Error(`Cannot write a forwarder for ${url}`);
  const tokenEnv = options.tokenEnv;
  if (tokenEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) {
    throw new Error(`--token-env must be an environment variable name; got ${tokenEnv}`);
  }
  const maxTime = (Math.ceil(options.timeoutMs) / 1000).toFixed(3);
  const token = tokenEnv === undefined ? "" : `
[ -n "\${${tokenEnv}:-}" ] || fail "the environment variable ${tokenEnv} is empty"`;
  // The token reaches curl through a here-document on fd 3, not its command line (which other
  // users of the machine can read).
  const curl = tokenEnv === undefined
    ? `printf '%s' "$event" | curl --silent --show-error --max-time ${maxTime} \\
  --header 'content-type: application/json' --data-binary @- \\
  --write-out '\\n%{http_code} %header{${ANSWER_HEADER}}' -- "$url"`
    : `printf '%s' "$event" | curl --silent --show-error --max-time ${maxTime} \\
  --header 'content-type: application/json' --header @/dev/fd/3 --data-binary @- \\
  --write-out '\\n%{http_code} %header{${ANSWER_HEADER}}' -- "$url" 3<<HOOKSCOPE_TOKEN
authorization: Bearer \${${tokenEnv}}
HOOKSCOPE_TOKEN`;
  return `#!/bin/sh
# A Claude Code command hook written by \`hookscope hook-forwarder\`: it POSTs the hook event on
# stdin to \`hookscope serve\` and prints the answer. When no answer of serve comes back (the
# server is down, slow, answers an HTTP error or anything but serve's own answer), a PreToolUse is
# denied and a UserPromptSubmit blocked, with the reason (fail closed); another event exits 1 (a
# non-blocking error); input that is not a hook event exits 2. Needs sh and curl 7.84 or later.
url='${url}'
kind=
nl='
'

fail() {
  echo "hookscope forwarder: $1" >&2
  case $kind in
    pre)
      printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"hookscope forwarder: %s"}}\\n' "$1"
      exit 0 ;;
    prompt)
      printf '{"decision":"block","reason":"hookscope forwarder: %s"}\\n' "$1"
      exit 0 ;;
    other) exit 1 ;;
    *) exit 2 ;;
  esac
}

# At most ${MAX_EVENT_BYTES} bytes are accepted; one more is read to tell.
event=$(head -c ${MAX_EVENT_BYTES + 1})
case $event in
  *'"hook_event_name":"PreToolUse"'* | *'"hook_event_name": "PreToolUse"'*) kind=pre ;;
  *'"hook_event_name":"UserPromptSubmit"'* | *'"hook_event_name": "UserPromptSubmit"'*) kind=prompt ;;
  *'"hook_event_name"'*) kind=other ;;
  *) fail "cannot read the event: not a Claude Code hook event" ;;
esac
[ \${#event} -le ${MAX_EVENT_BYTES} ] || fail "cannot read the event: it is larger than ${MAX_EVENT_BYTES} bytes"${token}

response=$(${curl}
) || fail "cannot reach $url (curl exit $?)"
status=\${response##*"$nl"}
body=\${response%"$nl"*}
[ "$status" = "200 ${ANSWER_HEADER_VALUE}" ] || fail "no answer of hookscope serve from $url (HTTP \${status%% *})"
case $body in
  *"$nl"*) fail "the answer from $url is not one JSON object" ;;
  '{'*'}') ;;
  *) fail "the answer from $url is not one JSON object" ;;
esac
printf '%s\\n' "$body"
`;
}
