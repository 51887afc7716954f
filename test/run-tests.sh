#!/usr/bin/env bash
# Runs the whole svclust test suite on a Debian 12 machine: installs what is
# missing, builds and installs the extension, then runs its steps side by
# side, as many at once as the machine has cores (SVCLUST_TEST_JOBS to
# change it): the check that no two of its files call each other
# (directly or through others), the core's unit tests under ASan/UBSan
# and under valgrind, the fuzz corpus replay, the pg_regress suite, every
# python test (test/crosscheck/*_test.py: scikit-learn, libsvm, the
# scorer; test/integration/*_test.py: the README's examples, the chromium
# test of svc_plot_svg's pictures), each on a throwaway PostgreSQL cluster
# of its own, and every test/integration/*_test.sh (pg_cron's scheduled
# refresh, load and a killed backend), which start their own.
#
# Each step writes its own log; when a step ends, its excerpt is printed
# in one piece.  A test that leaves a part out prints a line starting with
# "skip" (smo_libsvm_test.py without a data directory, say), which the
# summary lists.  Ends with one line "N passed, N failed"; the logs are
# removed when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."

bash test/setup-debian.sh || exit 1
. test/pg.sh

jobs=${SVCLUST_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
log=$(mktemp -d /tmp/svclust_tests.XXXXXX)
start=$(date +%s)

passed=0
failed=0
summary=()
skips=()

# "p f": the sums of every "N passed, N failed" line of a file
sum_counts() {
    grep -Eo '[0-9]+ passed, [0-9]+ failed' "$1" | awk '{p += $1; f += $3} END {print p + 0, f + 0}'
}

# ---- the steps: each a function whose output is its log, and which may
# write its counts ("p f") to $count; else they are summed over its log.
# A step that fails with no failure counted counts one.

step_cycles() {
    /usr/bin/python3 test/tools/file_cycles.py
}

# the extension scripts held to the rules of a trusted extension
step_scripts() {
    /usr/bin/python3 test/tools/extension_scripts_test.py
}

step_unit() {
    make -s -j"$jobs" unit >"$log/unit.out" 2>&1
    local rc=$? p f
    grep -E 'passed|FAIL|ERROR|runtime error|Error [0-9]|^skip' "$log/unit.out" | grep -v ' 0 failed$'
    read -r p f < <(sum_counts "$log/unit.out")
    # a sanitizer's report ends its test before its counts
    grep -qE 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$log/unit.out" && f=$((f + 1))
    echo "unit tests: $p passed, $f failed"
    echo "$p $f" >"$count"
    return $rc
}

step_valgrind() {
    make -s -j"$jobs" unit-valgrind >"$log/valgrind.out" 2>&1
    local rc=$? p f
    grep -E 'FAIL|==[0-9]+==|Error [0-9]|^skip' "$log/valgrind.out" | head -40
    # one check per test binary: its exit status under valgrind
    p=$(grep -cE '^valgrind test_[a-z0-9_]+: ok$' "$log/valgrind.out")
    f=$(grep -cE '^valgrind test_[a-z0-9_]+: FAILED' "$log/valgrind.out")
    echo "valgrind: $p passed, $f failed"
    echo "$p $f" >"$count"
    return $rc
}

step_fuzz() {
    bash test/fuzz/replay.sh >"$log/fuzz.out" 2>&1
    local rc=$?
    grep -E 'FAILED|fuzz replay' "$log/fuzz.out"
    [ $rc -eq 0 ] || tail -20 "$log/fuzz.out"
    return $rc
}

step_regress() {
    pg_start || return 1
    trap pg_stop EXIT
    # pg_regress writes results/ next to the tests
    make -s installcheck >"$log/regress.out" 2>&1
    local rc=$? rp rf
    grep -E '^(ok|not ok|test| *[a-z_]+ +\.\.\.)' "$log/regress.out" | head -60
    rp=$(grep -cE '(\.\.\. ok|^ok )' "$log/regress.out")
    rf=$(grep -cE '(\.\.\. FAILED|^not ok )' "$log/regress.out")
    if [ $rc -ne 0 ] && [ "$rf" -eq 0 ] || [ "$rp" -eq 0 ] && [ "$rf" -eq 0 ]; then
        # pg_regress itself failed (a missing expected file, a crash)
        cat "$log/regress.out"
        rf=$((rf + 1))
    fi
    [ -s regression.diffs ] && head -200 regression.diffs
    echo "$rp $rf" >"$count"
    pg_stop
    [ "$rf" -eq 0 ]
}

# a python test, on a server of its own
step_python() {
    pg_start || return 1
    trap pg_stop EXIT
    /usr/bin/python3 "$1" >"$out" 2>&1
    local rc=$?
    tail -20 "$out"
    sum_counts "$out" >"$count"
    pg_stop
    return $rc
}

# ---- running them

declare -a order=() reported=()
# start NAME FUNCTION ARGS...: in the background; NAME.log, and NAME.rc
# and NAME.secs when it ends
start_step() {
    local name=$1 f=$log/${1//\//_}
    shift
    order+=("$name")
    (
        s=$(date +%s)
        count=$f.count out=$f.out "$@" >"$f.log" 2>&1
        rc=$?
        echo $(($(date +%s) - s)) >"$f.secs"
        echo $rc >"$f.rc"
    ) &
}

# the steps that ended since the last call: excerpt, counts, skips
report_done() {
    local name p f rc secs k
    for name in "${order[@]}"; do
        k=$log/${name//\//_}
        [ -e "$k.rc" ] || continue
        case " ${reported[*]:-} " in *" $name "*) continue ;; esac
        reported+=("$name")
        rc=$(cat "$k.rc")
        secs=$(cat "$k.secs")
        echo "== $name ($secs s)"
        cat "$k.log"
        if [ -s "$k.count" ]; then
            read -r p f <"$k.count"
        else
            read -r p f < <(sum_counts "$k.log")
        fi
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
            echo "$name: exit status $rc"
            f=1
        fi
        passed=$((passed + p))
        failed=$((failed + f))
        summary+=("$(printf '%-40s %6d passed, %d failed  %4d s' "$name" "$p" "$f" "$secs")")
        while IFS= read -r line; do
            skips+=("$name: $line")
        done < <(grep -ihE '^skip' "$k.log" "$k.out" 2>/dev/null | sort -u)
    done
}

# run NAME FUNCTION ARGS...: once fewer than $jobs steps of the pool run
pool=()
run() {
    local n
    while :; do
        n=0
        for p in "${pool[@]}"; do
            kill -0 "$p" 2>/dev/null && n=$((n + 1))
        done
        [ "$n" -lt "$jobs" ] && break
        wait -n
        report_done
    done
    start_step "$@"
    pool+=($!)
}

echo "== build and install"
if ! { make -s clean && make -s -j"$jobs" && make -s install; } >"$log/build.log" 2>&1; then
    cat "$log/build.log"
    echo "build: 0 passed, 1 failed"
    echo "0 passed, 1 failed (logs in $log)"
    exit 1
fi
if grep -E 'warning:' "$log/build.log"; then
    echo "build warnings: 0 passed, 1 failed"
    failed=$((failed + 1))
    summary+=("$(printf '%-40s %6d passed, %d failed' build 0 1)")
else
    passed=$((passed + 1))
    summary+=("$(printf '%-40s %6d passed, %d failed' build 1 0)")
fi

# Outside the pool, at once: the scripts that start a server of their own
# (pg_cron's waits for the next minute; the load's pgbench clients keep
# the cores busy for a bounded time).
for t in test/integration/*_test.sh; do
    [ -e "$t" ] && start_step "$t" bash "$t"
done
# the longest first
run valgrind step_valgrind
run unit step_unit
run pg_regress step_regress
for t in test/crosscheck/*_test.py test/integration/*_test.py; do
    [ -e "$t" ] && run "$t" step_python "$t"
done
run fuzz step_fuzz
run cycles step_cycles
run scripts step_scripts

while [ -n "$(jobs -rp)" ]; do
    wait -n
    report_done
done
wait
report_done

echo
echo "== summary: $(($(date +%s) - start)) s"
printf '%s\n' "${summary[@]}"
if [ ${#skips[@]} -gt 0 ]; then
    echo "skipped parts:"
    printf '  %s\n' "${skips[@]}"
fi
if [ "$failed" -eq 0 ]; then
    rm -rf "$log"
else
    echo "logs: $log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
