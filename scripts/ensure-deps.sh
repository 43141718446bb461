#!/usr/bin/env bash
# Installs what `make run` and `make test` need on a fresh Debian machine that has Go: the
# PostgreSQL server binaries (package postgresql) when no initdb is found, a C compiler for
# the race detector, and xmllint (libxml2-utils) for the XSD checks of the payroll reports. It never creates or
# starts a system cluster: Wagerail runs its own private clusters.
set -euo pipefail

have_pg() {
  if [ -n "${DATABASE_URL:-}" ]; then return 0; fi
  if [ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/initdb" ]; then return 0; fi
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then return 0; fi
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

pkgs=()
have_pg || pkgs+=(postgresql)
# The race detector (make test) needs cgo, so a C compiler.
command -v gcc >/dev/null 2>&1 || pkgs+=(gcc libc6-dev)
# The payroll reports' tests validate every XML document against its XSD with xmllint
# (api/payroll_reports_test.go): Go has no XSD validator of its own.
command -v xmllint >/dev/null 2>&1 || pkgs+=(libxml2-utils)
if [ ${#pkgs[@]} -eq 0 ]; then exit 0; fi

echo "ensure-deps: installing ${pkgs[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-deps: need root (or sudo) to apt-get install ${pkgs[*]}" >&2; exit 1
  fi
fi
# Tell Debian's packaging not to create (and start) a 'main' system cluster: we never use one.
$SUDO mkdir -p /etc/postgresql-common
if [ ! -f /etc/postgresql-common/createcluster.conf ]; then
  echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${pkgs[@]}" >/dev/null
have_pg || { echo "ensure-deps: postgresql installed but initdb still not found" >&2; exit 1; }
echo "ensure-deps: installed ${pkgs[*]}" >&2
