#!/bin/sh
# Fuzz the parsers of bytes other processes write, with libFuzzer, each for a
# bounded time (TC_FUZZ_TIME seconds per target, default 10):
#   frame     the Two-Chains frame header (ucx_ext/ifunc/wire/frame.c)
#   join      the join wire: request and reply (src/membership/join_wire.cpp)
#   exchange  the view exchange's lengths (src/membership/view_exchange.cpp)
#   slot      an SMC slot header and RDMC descriptor (src/smc/receiver.cpp,
#             src/large/large.cpp)
#   decision  a leader's view-change decision (src/membership/view_change.cpp)
#   confine   the confine checker and rewriter of a peer's module
#             (ucx_ext/ifunc/jit/jit_confine.c with the JIT) on mutated bitcode of
#             the hostile corpus and of tcbench, and the runner on what it
#             admits: no byte outside the granted regions may change
# TC_FUZZ_TARGETS picks some (e.g. "join slot"). Each target compiles the
# production file that holds its check with -fsanitize=fuzzer,address,undefined
# (so the very function the product calls is what is fuzzed and measured) and
# takes the rest of the product from the build's shared libraries. Needs clang
# and clang++ with their libFuzzer runtime; without them the test is skipped
# (exit 77) and says why. A build whose libraries carry gcc's sanitizer
# runtime (--enable-asan) cannot be linked beside clang's: the C++ targets
# are skipped there, and say so.
set -u
srcdir=${TC_SRCDIR:?run from make check}
builddir=${TC_BUILDDIR:?run from make check}
clang=${TC_FUZZ_CC:-clang}
clangxx=${TC_FUZZ_CXX:-clang++}
time_s=${TC_FUZZ_TIME:-10}
targets=${TC_FUZZ_TARGETS:-frame join exchange slot decision confine}

for c in "$clang" "$clangxx"; do
    if ! command -v "$c" >/dev/null 2>&1; then
        echo "SKIP: $c is not installed (apt-get install clang)"
        exit 77
    fi
done
work=$(mktemp -d /tmp/tc-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return (int)(d == 0) + (int)n * 0; }\n' > "$work/probe.c"
if ! "$clang" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >"$work/probe.log" 2>&1; then
    echo "SKIP: $clang has no libFuzzer runtime (-fsanitize=fuzzer failed):"
    cat "$work/probe.log"
    exit 77
fi

# what configure chose for UCX
make_var() { sed -n "s/^$1 = //p" "$builddir/test/Makefile" 2>/dev/null; }
ucx_cppflags=$(make_var UCX_CPPFLAGS)
ucx_ldflags=$(make_var UCX_LDFLAGS)
ucx_libs=$(make_var UCX_LIBS)
san_flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
includes="-I$srcdir/ucx_ext -I$srcdir/ucx_ext/api -I$builddir/ucx_ext/api -I$srcdir/toolchain/api"
product_libs="-L$builddir/src/.libs -L$builddir/ucx_ext/.libs -Wl,-rpath,$builddir/src/.libs"
product_libs="$product_libs -Wl,-rpath,$builddir/ucx_ext/.libs -ltwochains_group -ltwochains"

# build_target NAME: the fuzzer binary $work/fuzz_NAME, or why not in $work/NAME.build
build_target() {
    case $1 in
    frame)
        "$clang" $san_flags $includes $ucx_cppflags "$srcdir/test/fuzz/fuzz_frame.c" \
            "$srcdir/ucx_ext/ifunc/wire/frame.c" -o "$work/fuzz_frame"
        return ;;
    confine)
        "$clang" $san_flags $includes $ucx_cppflags -I/usr/lib/llvm-14/include \
            "$srcdir/test/fuzz/fuzz_confine.c" "$srcdir/ucx_ext/ifunc/jit/jit_orc.c" \
            "$srcdir/ucx_ext/ifunc/jit/jit_confine.c" $product_libs $ucx_ldflags $ucx_libs \
            -L/usr/lib/llvm-14/lib -Wl,-rpath,/usr/lib/llvm-14/lib -lLLVM-14 -ldl \
            -o "$work/fuzz_confine"
        return ;;
    join)     sources="src/membership/join_wire.cpp" ;;
    exchange) sources="src/membership/view_exchange.cpp" ;;
    slot)     sources="src/smc/receiver.cpp src/large/large.cpp" ;;
    decision) sources="src/membership/view_change.cpp" ;;
    *)        echo "no fuzz target $1"; return 1 ;;
    esac
    files="$srcdir/test/fuzz/fuzz_$1.cpp"
    for f in $sources; do
        files="$files $srcdir/$f"
    done
    "$clangxx" -std=c++20 $san_flags $includes -I"$srcdir/src" -I"$srcdir/src/api" \
        -I"$srcdir/test/fuzz" $ucx_cppflags $files $product_libs $ucx_ldflags $ucx_libs \
        -o "$work/fuzz_$1"
}

failed=0
ran=0
for t in $targets; do
    if [ "$t" != frame ] && [ -n "${TC_SAN_FLAGS:-}" ]; then
        echo "SKIP $t: this build's libraries carry the configured sanitizer runtime" \
             "(TC_SAN_FLAGS=$TC_SAN_FLAGS), which cannot be linked beside clang's" \
             "libFuzzer; run the fuzz targets in a build without --enable-asan"
        continue
    fi
    if ! build_target "$t" >"$work/$t.build" 2>&1; then
        echo "FAIL $t: cannot build the fuzz target:"
        cat "$work/$t.build"
        failed=1
        continue
    fi
    mkdir "$work/corpus_$t"
    if [ "$t" = confine ]; then
        # seeds: every module of the corpus and of tcbench for this host,
        # behind the byte that names its entry (fuzz_confine.c's order)
        e=0
        for name in tch_ok tch_payload_pointer tch_read_past tch_forged_global tch_system \
                    tch_syscall tch_indirect tch_spin tch_recurse tch_index_overflow \
                    tch_state_by_one tch_state_overrun server_side_sum indirect_put ping \
                    calls_libc; do
            for bc in "$builddir"/test/twochains-pkgs/share/twochains/*/jam_$name.$(uname -m)-linux-gnu.bc; do
                [ -f "$bc" ] || continue
                { printf "\\$(printf %03o "$e")"; cat "$bc"; } >"$work/corpus_$t/seed_$name"
            done
            e=$((e + 1))
        done
    fi
    echo "fuzzing $t for ${time_s} s"
    # UCX's own signal handlers (the product's libraries load UCS) stay out
    # of libFuzzer's way
    # confine compiles a peer's module first in a child process, whose
    # failures inside LLVM the product contains (a reject): a mutated module
    # makes LLVM ask for gigabytes there, which must fail as malloc does
    # (NULL), not as a sanitizer report or a fuzzer's out-of-memory exit; a
    # sanitizer report of our own code in the child still fails the run
    asan_options=${ASAN_OPTIONS:-} extra=""
    if [ "$t" = confine ]; then
        asan_options="${asan_options:+$asan_options:}allocator_may_return_null=1"
        extra="-malloc_limit_mb=1000000"
    fi
    ASAN_OPTIONS=$asan_options UCX_HANDLE_ERRORS=none "$work/fuzz_$t" $extra \
        -max_total_time="$time_s" -print_final_stats=1 \
        -max_len=4096 -rss_limit_mb=2048 -artifact_prefix="$work/$t-" "$work/corpus_$t" \
        >"$work/$t.log" 2>&1
    rc=$?
    # a sanitizer's report from a child process (confine's dry runs) counts
    if grep -qE 'ERROR: AddressSanitizer|runtime error:' "$work/$t.log"; then
        rc=1
    fi
    ran=$((ran + 1))
    grep -E 'stat::number_of_executed_units|stat::new_units_added|Done [0-9]+ runs' \
        "$work/$t.log" | tail -3
    grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$work/$t.log" | tail -1
    if [ $rc -ne 0 ]; then
        echo "FAIL $t: the fuzzer found a crash or a broken promise (exit $rc):"
        grep -E 'a promise broke|ERROR|SUMMARY|runtime error' "$work/$t.log" | head -5
        tail -40 "$work/$t.log"
        # kept past this run, to reproduce: FUZZER < the file
        mkdir -p "$builddir/test/fuzz-artifacts"
        cp "$work/$t"-* "$builddir/test/fuzz-artifacts/" 2>/dev/null
        for crash in "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-oom-* \
                     "$work/$t"-timeout-*; do
            [ -f "$crash" ] || continue
            echo "input ($crash), base64: $(base64 -w0 "$crash")"
        done
        failed=1
    fi
done
if [ $failed -ne 0 ]; then
    exit 1
fi
if [ $ran -eq 0 ]; then
    exit 77
fi
echo "PASS: $ran target(s): no crash, no out-of-bounds access, every validator's promise held"
exit 0
