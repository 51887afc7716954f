#!/usr/bin/env bash
# Replays the committed fuzz inputs (corpus/TARGET and regressions/TARGET)
# through the fuzz targets without libFuzzer, under ASan and UBSan: one
# process per file, so that one crash does not hide the others.  Needs a
# C compiler with ASan and UBSan (clang or gcc), not libFuzzer.
#
#   bash test/fuzz/replay.sh      # ends with "fuzz replay: N passed, N failed"
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$here/build

. "$here/build.sh"

passed=0
failed=0
if ! fuzz_build_core; then
    echo "the core: build FAILED"
    failed=$((failed + 1))
fi
for t in model options state cvi_state; do
    if ! fuzz_build_target "$t" replay; then
        echo "replay_$t: build FAILED"
        failed=$((failed + 1))
        continue
    fi
    for f in "$here/corpus/$t"/* "$here/regressions/$t"/*; do
        [ -f "$f" ] || continue
        if out=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
                 "$build/replay_$t" "$f" 2>&1); then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "FAILED: replay_$t ${f#"$top"/}"
            echo "$out" | grep -E -m 10 'ERROR|runtime error|fuzz invariant|SUMMARY|#[0-9] ' || echo "$out" | tail -5
        fi
    done
done
echo "fuzz replay: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
