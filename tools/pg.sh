#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback, for the `#| postgres` tests.
#   eval "$(tools/pg.sh start)"   # starts it, prints `export RLNB_TEST_DATABASE_URL=...`
#   tools/pg.sh restart           # stops and starts it again (a failover, as its clients see it)
#   tools/pg.sh stop              # stops it and removes its data folder
# fsync is off (tests need no durability); RLNB_PG_FSYNC=on for benchmarks that promise durable commits.
# Installs Debian's postgresql when its binaries are missing (root: apt-get; else it says what to install).
set -euo pipefail
DIR=${RLNB_PG_DIR:-/tmp/rlnb-pg}
PORT=${RLNB_PG_PORT:-54329}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "${1:-}" in
start)
  if [ -z "$bin" ]; then
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
      bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    else echo "PostgreSQL server binaries not found: sudo apt-get install postgresql" >&2; exit 1; fi
  fi
  "$0" stop >/dev/null 2>&1 || true
  mkdir -p "$DIR"; [ "$(id -u)" = 0 ] && chown postgres "$DIR"
  as_pg "$bin/initdb" -D "$DIR/data" -A trust -U rlnb >&2
  as_pg "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=${RLNB_PG_FSYNC:-off}" start >&2
  echo "export RLNB_TEST_DATABASE_URL=postgresql://rlnb@127.0.0.1:$PORT/postgres"
  ;;
restart)   # the same server stopped (connections cut) and started again: what a client sees in a failover
  as_pg "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/log" -m fast -w restart >&2 </dev/null
  ;;
stop)
  [ -d "$DIR/data" ] && as_pg "$bin/pg_ctl" -D "$DIR/data" -m fast stop >&2 || true
  rm -rf "$DIR"
  ;;
*) echo "usage: $0 start|restart|stop" >&2; exit 2 ;;
esac
