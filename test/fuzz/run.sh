#!/usr/bin/env bash
# Fuzzes the svclust core with libFuzzer, under ASan and UBSan.
#
#   bash test/fuzz/run.sh [SECONDS] [TARGET...]   # default 60 s per target
#   bash test/fuzz/run.sh --seeds                 # rewrite corpus/model, corpus/state
#
# Targets: model (svc_model_decode), options (svc_options_parse), state
# (svc_state_check and what the aggregate does with a state).  Each runs
# for SECONDS from its committed seeds (corpus/TARGET) and regression
# inputs (regressions/TARGET); new inputs go to build/corpus/TARGET (not
# committed), a crashing input to build/artifacts/TARGET/.  Exits non-zero
# if any target crashed, leaked, timed out or broke an invariant.  A crash
# found here is fixed in the core and its input copied to
# regressions/TARGET/, which replay.sh (part of the test suite) replays.
#
# Needs clang with libFuzzer: on Debian 12 the packages clang-14 and
# libclang-rt-14-dev (installed here when missing and run as root).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$here/build

. "$here/build.sh"

if [ "${1:-}" = "--seeds" ]; then
    fuzz_build_seeds || exit 1
    mkdir -p "$here/corpus/model" "$here/corpus/state" "$here/corpus/cvi_state"
    "$build/make_seeds" "$here/corpus"
    exit $?
fi

secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model options state cvi_state)

fuzz_need_libfuzzer || exit 1

# -max_len: a few models or states of a handful of rows and dimensions;
# larger inputs only make each run slower, not the decoder's paths deeper.
declare -A max_len=([model]=16384 [options]=1024 [state]=16384 [cvi_state]=16384)

status=0
for t in "${targets[@]}"; do
    [ -n "${max_len[$t]:-}" ] || { echo "unknown target $t" >&2; exit 2; }
    fuzz_build_target "$t" fuzzer || { status=1; continue; }
    mkdir -p "$build/corpus/$t" "$build/artifacts/$t" "$here/regressions/$t"
    dict=()
    [ -f "$here/$t.dict" ] && dict=(-dict="$here/$t.dict")
    echo "== fuzz_$t for ${secs}s"
    ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        "$build/fuzz_$t" -max_total_time="$secs" -max_len="${max_len[$t]}" \
        -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="$build/artifacts/$t/" \
        "$build/corpus/$t" "$here/corpus/$t" "$here/regressions/$t" \
        >"$build/fuzz_$t.log" 2>&1
    rc=$?
    grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' \
        "$build/fuzz_$t.log"
    if [ $rc -ne 0 ]; then
        echo "fuzz_$t FAILED (exit $rc); log: $build/fuzz_$t.log; inputs:"
        ls -1 "$build/artifacts/$t/" 2>/dev/null
        grep -E -m 20 'ERROR|runtime error|fuzz invariant|SUMMARY|^    #[0-9]' "$build/fuzz_$t.log"
        status=1
    else
        echo "fuzz_$t: no crash"
    fi
done
exit $status
