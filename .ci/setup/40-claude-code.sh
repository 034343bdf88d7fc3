# The real Claude Code binary for tests/claude/claude_code_e2e_test.ts: the npm package
# @anthropic-ai/claude-agent-sdk and its optional dependency @anthropic-ai/claude-agent-sdk-linux-x64
# (`claude`, ~400 MB). A test-only install, kept out of the library's dependencies and cached
# outside the repository ($HOME/.cache/hookscope/claude-agent-sdk), so a fresh clone reuses it.
# Sourced by .ci/run; idempotent. The version is pinned so the tests meet one known protocol.
hookscope_claude_version=0.3.333
hookscope_claude_dir="$HOME/.cache/hookscope/claude-agent-sdk"
hookscope_claude_bin="$hookscope_claude_dir/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude"
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  if ! grep -qs "\"version\": \"$hookscope_claude_version\"" \
    "$hookscope_claude_dir/node_modules/@anthropic-ai/claude-agent-sdk/package.json" ||
    [ ! -x "$hookscope_claude_bin" ]; then
    mkdir -p "$hookscope_claude_dir"
    [ -f "$hookscope_claude_dir/package.json" ] ||
      echo '{"name":"hookscope-claude-code-cache","private":true}' >"$hookscope_claude_dir/package.json"
    (cd "$hookscope_claude_dir" &&
      npm install --no-audit --no-fund --no-save "@anthropic-ai/claude-agent-sdk@$hookscope_claude_version")
  fi
  export HOOKSCOPE_CLAUDE_BIN="$hookscope_claude_bin"
  export HOOKSCOPE_CLAUDE_SDK="$hookscope_claude_dir/node_modules/@anthropic-ai/claude-agent-sdk"
  "$hookscope_claude_bin" --version
fi
