# Sourced by run.sh and replay.sh: builds the fuzz targets, their replay
# drivers and the seed generator into test/fuzz/build/.  Expects $here,
# $top and $build.
fuzz_cc() {
    if [ -n "${CC:-}" ]; then echo "$CC"; return; fi
    for c in clang clang-14 cc; do
        command -v "$c" >/dev/null 2>&1 && { echo "$c"; return; }
    done
    echo cc
}

FUZZ_CFLAGS="-std=gnu11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter -I$top/src/core"
FUZZ_SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"

# Every file of the core, options_text.c (the text reader the module leaves
# out) too.
fuzz_core_srcs() {
    ls "$top"/src/core/*.c | sort
}

# Whether the compiler links -fsanitize=fuzzer; installs it if root can.
fuzz_need_libfuzzer() {
    local cc probe
    cc=$(fuzz_cc)
    probe=$(mktemp -d)
    echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' >"$probe/p.c"
    if ! $cc -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
            echo "installing clang-14 and libclang-rt-14-dev (libFuzzer)"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null
            command -v clang >/dev/null || ln -sf "$(command -v clang-14)" /usr/local/bin/clang
            cc=$(CC= fuzz_cc)
        fi
        if ! $cc -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
            rm -rf "$probe"
            echo "libFuzzer is not available: install clang-14 and libclang-rt-14-dev" >&2
            return 1
        fi
    fi
    rm -rf "$probe"
}

# The core's objects for the replay drivers, compiled once (as many at
# once as there are cores) for the four of them; a file is compiled again
# when it, a header of the core or this script is newer than its object.
fuzz_core_objs() {
    fuzz_core_srcs | sed "s|.*/\(.*\)\.c\$|$build/core/\1.o|"
}

fuzz_build_core() {
    local newest
    mkdir -p "$build/core"
    newest=$(ls -t "$top"/src/core/*.h "$here/build.sh" | head -1)
    fuzz_core_srcs | while read -r src; do
        obj=$build/core/$(basename "${src%.c}").o
        if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest" -nt "$obj" ]; then
            echo "$src"
        fi
    done | FUZZ_CC=$(fuzz_cc) FUZZ_FLAGS="$FUZZ_CFLAGS $FUZZ_SAN" \
        xargs -r -n 1 -P "$(nproc 2>/dev/null || echo 1)" \
        sh -c '$FUZZ_CC $FUZZ_FLAGS -c -o "$0/$(basename "$1" .c).o" "$1"' "$build/core"
}

# fuzz_build_target TARGET fuzzer|replay (replay: after fuzz_build_core)
fuzz_build_target() {
    local t=$1 kind=$2 cc out
    cc=$(fuzz_cc)
    mkdir -p "$build"
    if [ "$kind" = fuzzer ]; then
        out=$build/fuzz_$t
        # shellcheck disable=SC2046
        $cc $FUZZ_CFLAGS -fsanitize=fuzzer $FUZZ_SAN -o "$out" \
            "$here/fuzz_$t.c" $(fuzz_core_srcs) -lm
    else
        out=$build/replay_$t
        # shellcheck disable=SC2046
        $cc $FUZZ_CFLAGS $FUZZ_SAN -o "$out" \
            "$here/fuzz_$t.c" "$here/replay.c" $(fuzz_core_objs) -lm
    fi
}

fuzz_build_seeds() {
    local cc
    cc=$(fuzz_cc)
    mkdir -p "$build"
    # shellcheck disable=SC2046
    $cc $FUZZ_CFLAGS -o "$build/make_seeds" "$here/make_seeds.c" $(fuzz_core_srcs) -lm
}
