#!/usr/bin/env bash
# Runs before `npm test`: the suite needs PostgreSQL on 127.0.0.1:5432 (trust auth, database `test`).
# Starts the local cluster when it is installed but down; fails loudly (never skips) when it cannot.
set -euo pipefail
host=127.0.0.1
port=5432
ready() { pg_isready -q -h "$host" -p "$port" 2>/dev/null; }
if ! command -v pg_isready >/dev/null 2>&1; then
  echo "ensure-postgres: pg_isready not found; install PostgreSQL (Debian: postgresql) to run the tests" >&2
  exit 1
fi
if ! ready; then
  echo "ensure-postgres: PostgreSQL is down on $host:$port, starting it" >&2
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    for version in /etc/postgresql/*; do
      pg_ctlcluster --skip-systemctl-redirect "$(basename "$version")" main start || true
    done
  fi
  for _ in $(seq 1 30); do
    ready && break
    sleep 1
  done
fi
if ! ready; then
  echo "ensure-postgres: PostgreSQL unreachable on $host:$port; the suite runs on SQLite and PostgreSQL and will not skip" >&2
  exit 1
fi
if ! psql -h "$host" -p "$port" -d test -Atc 'select 1' >/dev/null 2>&1; then
  user="$(id -un)"
  echo "ensure-postgres: cannot open database 'test' as $user; creating it" >&2
  psql -h "$host" -p "$port" -d postgres -Atc 'create database test' >/dev/null
fi
