#!/usr/bin/env bash
# The packaged-consumer tier (scripts/packaged/run.ts): the published file set over http for Deno,
# the npm form's tarball for Node 20, Node 24 and Bun, a bundled Worker in workerd, and the
# README's and docs' examples type-checked. Ends with `== packaged: N passed, N failed`.
# Arguments go to run.ts (--ref COMMIT, --keep, --only deno,npm,workerd,examples).
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_COLOR=1 DENO_NO_UPDATE_CHECK=1
exec node --import tsx scripts/packaged/run.ts "$@"
