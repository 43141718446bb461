#!/usr/bin/env bash
# Installs what `make run` and `make test` need on a fresh Debian machine that has Go: the
# PostgreSQL server binaries (package postgresql) when no initdb is found. It never creates or
# starts a system cluster: Wagerail runs its own private clusters.
set -euo pipefail

have_pg() {
  if [ -n "${DATABASE_URL:-}" ]; then return 0; fi
  if [ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/initdb" ]; then return 0; fi
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then return 0; fi
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

if have_pg; then exit 0; fi

echo "ensure-deps: no PostgreSQL server binaries found; installing the postgresql package" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-deps: need root (or sudo) to apt-get install postgresql" >&2; exit 1
  fi
fi
# Tell Debian's packaging not to create (and start) a 'main' system cluster: we never use one.
$SUDO mkdir -p /etc/postgresql-common
if [ ! -f /etc/postgresql-common/createcluster.conf ]; then
  echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq postgresql >/dev/null
have_pg || { echo "ensure-deps: postgresql installed but initdb still not found" >&2; exit 1; }
echo "ensure-deps: installed $(ls -d /usr/lib/postgresql/*/bin | tail -1)" >&2
