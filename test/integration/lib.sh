# Shared by test/integration/*_test.sh: their check lines, their closing
# count, a psql for scripts and a throwaway server of their own.  Sourced
# from the repository's root.

passed=0
failed=0

# check NAME GOT EXPECTED: one "ok" or "FAILED" line
check() {
    if [ "$2" = "$3" ]; then
        echo "ok     $1"
        passed=$((passed + 1))
    else
        echo "FAILED $1: got '$2', expected '$3'"
        failed=$((failed + 1))
    fi
}

# the closing "N passed, N failed" line; exits non-zero on a failure
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}

q() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

# Each test runs a cluster of its own, beside any other the caller runs:
# one that kills a backend or preloads a library must not reach the
# caller's.  So the caller's PGPORT and PGHOST are dropped here.
unset PGPORT PGHOST
. test/pg.sh

# start_own_server WHAT: pg_start, or the test ends with a failed check
# (PG_EXTRA_OPTS adds server settings).  The caller sets its trap.
start_own_server() {
    pg_start || { check "$1 starts" no yes; finish; }
}
