#!/usr/bin/env bash
# Placement's own functional tests (../shared/conformance) against a daemon on MariaDB, each YAML
# file on a new database of one throwaway mariadbd (Debian's mariadb-server) on a free loopback
# port: scripts/conformance-on.sh mariadb RESULTS.json [run.py's options]. Exits 3 when mariadbd
# is not installed.
set -euo pipefail
kind=$1 out=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$kind" = mariadb ] || { echo "usage: $0 mariadb RESULTS.json [run.py options]" >&2; exit 2; }
[ -x /usr/sbin/mariadbd ] && [ -x /usr/bin/mariadb-install-db ] || { echo "mariadb-server not installed" >&2; exit 3; }
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
/usr/bin/mariadb-install-db --no-defaults --datadir="$dir/data" --user="$(id -un)" --auth-root-authentication-method=normal --skip-test-db >/dev/null
/usr/sbin/mariadbd --no-defaults --datadir="$dir/data" --socket="$dir/sock" --port="$port" --bind-address=127.0.0.1 \
  --user="$(id -un)" --skip-grant-tables --skip-log-bin --innodb-buffer-pool-size=128M --pid-file="$dir/pid" >"$dir/log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 120); do /usr/bin/mariadb --no-defaults -S "$dir/sock" -e 'select 1' >/dev/null 2>&1 && break; sleep 0.25; done
export PLACEMAT_TEST_DB="mysql://root@127.0.0.1:$port/"
cd "$root"
python3 ../shared/conformance/run.py --server-cmd "PLACEMAT_ROOT=$root/scripts/conformance-db bash $root/../shared/conformance/start-placemat.sh {dir} {port}" \
  --json "$out" "$@"
