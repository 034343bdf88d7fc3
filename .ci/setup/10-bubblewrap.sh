# bubblewrap: the OS sandbox the coding toolkit runs bash and formatters in (docs/sandbox.md).
# Sourced by .ci/run as root under `set -euo pipefail`; idempotent: installs only when `bwrap`
# is missing, then checks that it can create the namespaces the sandbox uses.
if ! command -v bwrap >/dev/null 2>&1; then
  if [ "${HOOKSCOPE_APT_UPDATED:-}" != 1 ]; then
    apt-get update -qq
    export HOOKSCOPE_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap
fi
bwrap --version
bwrap --die-with-parent --new-session --unshare-user --disable-userns --uid 65534 --gid 65534 \
  --unshare-pid --unshare-net --cap-drop ALL --ro-bind / / --proc /proc --dev /dev /usr/bin/true
echo "bubblewrap: namespaces work"
