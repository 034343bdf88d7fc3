#!/usr/bin/env bash
# The whole test suite, once under each runtime: Deno, Bun and Node 20 (through tsx).
# Ends with one plain line "N passed, N failed" totalled over the three runtimes and exits
# non-zero when any runtime failed. Runs `npm ci` first when Deno, Bun or tsx is missing.
set -u
cd "$(dirname "$0")/.."
bin="$PWD/node_modules/.bin"
for tool in deno bun tsx; do
  if [ ! -x "$bin/$tool" ]; then
    echo "== $bin/$tool is missing: installing with npm ci"
    npm ci --no-audit --no-fund || exit 2
    break
  fi
done
export NO_COLOR=1
mkdir -p tmp
# The formatter test runs apart under Deno with --allow-run narrowed to the formatter (node).
narrow="tests/action/coding/auto_format_test.ts"
mapfile -t files < <(find tests -name '*_test.ts' | sort)
total_pass=0
total_fail=0
status=0

add() { # runtime passed failed exit
  local runtime=$1 passed=$2 failed=$3 code=$4
  if [ "$code" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  echo "== $runtime: $passed passed, $failed failed (exit $code)"
  total_pass=$((total_pass + passed))
  total_fail=$((total_fail + failed))
  [ "$code" -eq 0 ] && [ "$failed" -eq 0 ] || status=1
}

deno_counts() { # log -> "passed failed"
  local line
  line=$(grep -E '^(ok|FAILED) \| ' "$1" | tail -n 1)
  local p f ps fs
  p=$(sed -nE 's/.*\| ([0-9]+) passed.*/\1/p' <<<"$line")
  ps=$(sed -nE 's/.*passed \(([0-9]+) steps?\).*/\1/p' <<<"$line")
  f=$(sed -nE 's/.*\| ([0-9]+) failed.*/\1/p' <<<"$line")
  fs=$(sed -nE 's/.*failed \(([0-9]+) steps?\).*/\1/p' <<<"$line")
  echo "${ps:-${p:-0}} ${fs:-${f:-0}}"
}

echo "== deno test"
deno_main=()
for f in "${files[@]}"; do [ "$f" = "$narrow" ] || deno_main+=("$f"); done
"$bin/deno" test -A "${deno_main[@]}" 2>&1 | tee tmp/deno-test.log
code=${PIPESTATUS[0]}
read -r p f < <(deno_counts tmp/deno-test.log)
if [ -f "$narrow" ]; then
  "$bin/deno" test --allow-read --allow-write --allow-env --allow-run=node "$narrow" 2>&1 |
    tee tmp/deno-narrow.log
  code2=${PIPESTATUS[0]}
  read -r p2 f2 < <(deno_counts tmp/deno-narrow.log)
  p=$((p + p2)); f=$((f + f2)); [ "$code" -ne 0 ] || code=$code2
fi
add deno "$p" "$f" "$code"

echo "== bun test"
"$bin/bun" test --timeout 60000 "${files[@]/#/./}" 2>&1 | tee tmp/bun-test.log
code=${PIPESTATUS[0]}
p=$(sed -nE 's/^ *([0-9]+) pass$/\1/p' tmp/bun-test.log | tail -n 1)
f=$(sed -nE 's/^ *([0-9]+) fail$/\1/p' tmp/bun-test.log | tail -n 1)
add bun "${p:-0}" "${f:-0}" "$code"

echo "== node $(node --version) --test (tsx)"
node --import tsx --test --test-timeout=120000 "${files[@]}" 2>&1 | tee tmp/node-test.log
code=${PIPESTATUS[0]}
p=$(sed -nE 's/^# pass ([0-9]+)$/\1/p' tmp/node-test.log | tail -n 1)
f=$(sed -nE 's/^# fail ([0-9]+)$/\1/p' tmp/node-test.log | tail -n 1)
add node "${p:-0}" "${f:-0}" "$code"

echo "$total_pass passed, $total_fail failed"
exit $status
