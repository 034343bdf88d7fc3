# shellcheck shell=bash
# PostgreSQL for the store tests (sourced by .ci/run; runs as root). Idempotent:
# - checks that the server answers on 127.0.0.1:5432, starts the local cluster when it does not;
# - creates a fresh database for this run and exports HOOKSCOPE_PG_URL pointing at it;
# - drops that database when the run ends (an EXIT trap that keeps any trap set before it).
# Without a server the PostgreSQL tests fail (they are never skipped).

hookscope_pg_host=${HOOKSCOPE_PG_HOST:-127.0.0.1}
hookscope_pg_port=${HOOKSCOPE_PG_PORT:-5432}
hookscope_pg_user=${HOOKSCOPE_PG_USER:-root}

hookscope_pg_answers() {
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q -h "$hookscope_pg_host" -p "$hookscope_pg_port"
  else
    psql -h "$hookscope_pg_host" -p "$hookscope_pg_port" -U "$hookscope_pg_user" -d postgres \
      -Atqc 'SELECT 1' >/dev/null 2>&1
  fi
}

if ! hookscope_pg_answers; then
  echo "PostgreSQL does not answer on $hookscope_pg_host:$hookscope_pg_port: starting it"
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    for hookscope_pg_version in $(ls /etc/postgresql); do
      pg_ctlcluster --skip-systemctl-redirect "$hookscope_pg_version" main start || true
    done
  fi
  for _ in $(seq 1 30); do
    hookscope_pg_answers && break
    sleep 1
  done
fi

if hookscope_pg_answers; then
  hookscope_pg_db="hookscope_ci_$$_$(date +%s)"
  if psql -h "$hookscope_pg_host" -p "$hookscope_pg_port" -U "$hookscope_pg_user" -d postgres \
    -v ON_ERROR_STOP=1 -qc "CREATE DATABASE \"$hookscope_pg_db\""; then
    export HOOKSCOPE_PG_URL="postgres://$hookscope_pg_user@$hookscope_pg_host:$hookscope_pg_port/$hookscope_pg_db"
    echo "PostgreSQL answers; tests use $HOOKSCOPE_PG_URL (dropped at exit)"
    hookscope_pg_drop() {
      psql -h "$hookscope_pg_host" -p "$hookscope_pg_port" -U "$hookscope_pg_user" -d postgres \
        -qc "DROP DATABASE IF EXISTS \"$hookscope_pg_db\" WITH (FORCE)" >/dev/null 2>&1 ||
        echo "warning: could not drop PostgreSQL database $hookscope_pg_db" >&2
    }
    # Keep whatever EXIT trap is already set and run ours after it.
    hookscope_pg_previous_trap=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
    # shellcheck disable=SC2064
    trap "${hookscope_pg_previous_trap:+$hookscope_pg_previous_trap; }hookscope_pg_drop" EXIT
  else
    echo "warning: could not create a PostgreSQL database for this run; the tests use the default" >&2
  fi
else
  echo "warning: PostgreSQL does not answer on $hookscope_pg_host:$hookscope_pg_port and could not be started; the PostgreSQL tests will fail" >&2
fi
