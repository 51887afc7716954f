#!/usr/bin/env bash
# The svclust benchmark in one command: builds and installs the extension,
# starts a throwaway PostgreSQL server, runs bench.py with the arguments
# given, and stops the server.  As root on Debian 12 it first installs what
# is missing (test/setup-debian.sh).  Examples:
#   bash test/bench/run.sh --out bench-results.md           # full protocol
#   bash test/bench/run.sh --quick --out bench-quick.md     # a few minutes
#   bash test/bench/run.sh --data /path/to/csvs --out results.md
#   bash test/bench/run.sh --only train                     # training speed only
#   bash test/bench/run.sh --only quality --quick           # defaults beyond 2-D
# Paths are relative to the directory you run it from; --help lists options.
set -euo pipefail
export BENCH_CWD="$PWD"
cd "$(dirname "$0")/../.."
for a in "$@"; do
    if [ "$a" = "-h" ] || [ "$a" = "--help" ]; then
        exec /usr/bin/python3 -B test/bench/bench.py --help
    fi
done
bash test/setup-debian.sh
bash test/bench/setup-bench.sh
if ! make -s >/dev/null || ! make -s install >/dev/null; then
    echo "run.sh: building or installing svclust failed" >&2
    exit 1
fi
. test/pg.sh
trap pg_stop EXIT
pg_start
/usr/bin/python3 -B test/bench/bench.py "$@"
