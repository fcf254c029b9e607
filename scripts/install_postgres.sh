#!/usr/bin/env bash
# Install what the PostgreSQL backend's tests need: Debian's postgresql (the server binaries initdb, pg_ctl, postgres,
# and pg_trgm; the tests start their own throwaway server, never the machine's) and the psycopg client in the venv.
# Idempotent: does nothing when both are already there. Under root the tests run the server as the `postgres` user
# (initdb refuses root); Debian's package creates that user, and this script checks it is there.
#
#   scripts/install_postgres.sh            # uses .venv/bin/python for psycopg
#   PYTHON=python3 scripts/install_postgres.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"

bindir() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

BIN="$(bindir || true)"
if [ -n "$BIN" ] && [ -x "$BIN/initdb" ] && [ -x "$BIN/postgres" ] \
        && [ -n "$(ls /usr/share/postgresql/*/extension/pg_trgm.control 2>/dev/null)" ]; then
    echo "postgresql: present ($("$BIN/postgres" --version))"
else
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "postgresql server missing (no /usr/lib/postgresql/*/bin/initdb) and apt-get is not available:" \
             "install PostgreSQL (server and contrib) with your package manager, or set AGENTMEM_PG_BINDIR" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
            echo "postgresql missing and not running as root (no sudo): run 'apt-get install -y postgresql' as root" >&2
            exit 1
        fi
    fi
    echo "postgresql: installing with apt-get (about 30 s, 60 MB)"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # policy-rc.d-less containers: the package's own cluster may fail to start; the tests never use it.
    $SUDO apt-get install -y -qq postgresql >/dev/null
    BIN="$(bindir)"
    "$BIN/postgres" --version
fi

if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "running as root and there is no 'postgres' user to run the throwaway test server as (initdb refuses" \
         "root): reinstall Debian's postgresql-common, or 'useradd --system postgres'" >&2
    exit 1
fi

if "$PYTHON" -c "import psycopg, psycopg_pool" >/dev/null 2>&1; then
    echo "psycopg: present"
else
    echo "psycopg: installing into $PYTHON"
    "$PYTHON" -m pip install --quiet "psycopg[binary]>=3.1.18" "psycopg-pool>=3.2"
fi
