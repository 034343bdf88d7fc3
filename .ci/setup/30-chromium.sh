# Headless Chromium for tests/runtimes/hosts/chromium_test.ts (driven by playwright-core, which
# never downloads a browser here). Sourced by .ci/run as root; idempotent.
if [ ! -x /usr/bin/chromium ]; then
  if [ -z "${HOOKSCOPE_APT_UPDATED:-}" ]; then
    apt-get update -qq
    export HOOKSCOPE_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
/usr/bin/chromium --version 2>/dev/null
