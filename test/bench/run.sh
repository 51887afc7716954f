#!/usr/bin/env bash
# The svclust benchmark in one command: builds and installs the extension,
# starts a throwaway server and runs bench.py with the arguments given, e.g.
#   bash test/bench/run.sh --quick --out bench-results.md
#   bash test/bench/run.sh --data /path/to/csvs --out results.md
set -euo pipefail
cd "$(dirname "$0")/../.."
bash test/setup-debian.sh
make -s >/dev/null && make -s install >/dev/null
. test/pg.sh
pg_start
trap pg_stop EXIT
/usr/bin/python3 test/bench/bench.py "$@"
