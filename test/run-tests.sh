#!/usr/bin/env bash
# Runs the whole svclust test suite on a Debian 12 machine: installs what is
# missing, builds and installs the extension, checks that no two of its
# files call each other (directly or through others), runs the core's unit
# tests under ASan/UBSan and valgrind, starts a throwaway PostgreSQL
# cluster, runs the pg_regress suite, the scikit-learn cross-checks, the
# README's examples, the chromium test of svc_plot_svg's pictures and the
# pg_cron test (on a server of its own), and ends with one
# line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

bash test/setup-debian.sh || exit 1
. test/pg.sh

passed=0
failed=0
log=$(mktemp -d /tmp/svclust_tests.XXXXXX)

# Add up every "N passed, N failed" line a step printed.
count() {
    local p f
    p=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$1" | awk '{s+=$1} END {print s+0}')
    f=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$1" | awk '{s+=$3} END {print s+0}')
    passed=$((passed + p))
    failed=$((failed + f))
}

step() {
    echo "== $1"
}

step "build and install"
if ! { make -s clean && make -s && make -s install; } >"$log/build.log" 2>&1; then
    cat "$log/build.log"
    echo "build: 0 passed, 1 failed"
    echo "0 passed, 1 failed"
    exit 1
fi
if grep -E 'warning:' "$log/build.log"; then
    echo "build warnings: 0 passed, 1 failed" | tee -a "$log/warn.log"
    failed=$((failed + 1))
else
    passed=$((passed + 1))
fi

step "file-level call graph (test/tools/file_cycles.py)"
/usr/bin/python3 test/tools/file_cycles.py >"$log/cycles.log" 2>&1
rc=$?
tail -8 "$log/cycles.log"
count "$log/cycles.log"
if [ $rc -ne 0 ] && ! grep -qE '[0-9]+ passed, [1-9][0-9]* failed' "$log/cycles.log"; then
    failed=$((failed + 1))
fi

step "unit tests (ASan + UBSan)"
make -s unit 2>&1 | tee "$log/unit.log" | grep -E 'passed|FAIL|ERROR|runtime error' || true
count "$log/unit.log"
if grep -qE 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$log/unit.log"; then
    failed=$((failed + 1))
fi

step "unit tests (valgrind)"
make -s unit-valgrind >"$log/valgrind.log" 2>&1
vg=$?
grep -E 'passed|FAIL|==[0-9]+==' "$log/valgrind.log" | head -40
if [ $vg -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

step "fuzz corpus and regression replay (ASan + UBSan)"
bash test/fuzz/replay.sh >"$log/fuzz.log" 2>&1
fz=$?
grep -E 'FAILED|fuzz replay' "$log/fuzz.log"
count "$log/fuzz.log"
if [ $fz -ne 0 ] && ! grep -qE '[0-9]+ passed, [1-9][0-9]* failed' "$log/fuzz.log"; then
    tail -20 "$log/fuzz.log"
    failed=$((failed + 1))
fi

step "pg_regress"
pg_start || { echo "0 passed, 1 failed"; exit 1; }
trap pg_stop EXIT
# pg_regress writes results/ next to the tests; let the server user read them
make -s installcheck >"$log/regress.log" 2>&1
regress_rc=$?
grep -E '^(ok|not ok|test| *[a-z_]+ +\.\.\.)' "$log/regress.log" | head -60
rp=$(grep -cE '(\.\.\. ok|^ok )' "$log/regress.log")
rf=$(grep -cE '(\.\.\. FAILED|^not ok )' "$log/regress.log")
passed=$((passed + rp))
failed=$((failed + rf))
if [ $regress_rc -ne 0 ] && [ "$rf" -eq 0 ] || [ "$rp" -eq 0 ] && [ "$rf" -eq 0 ]; then
    # pg_regress itself failed (a missing expected file, a crash): count it
    cat "$log/regress.log"
    failed=$((failed + 1))
fi
if [ -s regression.diffs ]; then
    head -200 regression.diffs
fi

for t in test/crosscheck/*_test.py test/integration/*_test.py; do
    [ -e "$t" ] || continue
    step "$t"
    /usr/bin/python3 "$t" >"$log/py.log" 2>&1
    rc=$?
    tail -20 "$log/py.log"
    count "$log/py.log"
    if [ $rc -ne 0 ] && ! grep -qE '[0-9]+ passed, [1-9][0-9]* failed' "$log/py.log"; then
        failed=$((failed + 1))
    fi
done

step "test/integration/pg_cron_test.sh (a server of its own with pg_cron preloaded)"
bash test/integration/pg_cron_test.sh >"$log/cron.log" 2>&1
rc=$?
tail -20 "$log/cron.log"
count "$log/cron.log"
if [ $rc -ne 0 ] && ! grep -qE '[0-9]+ passed, [1-9][0-9]* failed' "$log/cron.log"; then
    failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
