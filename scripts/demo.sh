#!/usr/bin/env bash
# Runs the hookscope demo on embedded defaults: no API key, no server to install.
set -eu
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/deno ]; then
  echo "== installing with npm ci (first run)"
  npm ci --no-audit --no-fund
fi
if [ -f cli/main.ts ]; then
  exec node_modules/.bin/deno run -A cli/main.ts demo "$@"
fi
exec node_modules/.bin/deno run examples/bus_demo.ts
