#!/bin/sh
# Fuzz the frame header validator with libFuzzer for a bounded time
# (TC_FUZZ_TIME seconds, default 15). Needs clang with its libFuzzer
# runtime; without it the test is skipped (exit 77) and says why.
set -u
srcdir=${TC_SRCDIR:?run from make check}
builddir=${TC_BUILDDIR:?run from make check}
clang=${TC_FUZZ_CC:-clang}
time_s=${TC_FUZZ_TIME:-15}

if ! command -v "$clang" >/dev/null 2>&1; then
    echo "SKIP: $clang is not installed (apt-get install clang)"
    exit 77
fi
work=$(mktemp -d /tmp/tc-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return (int)(d == 0) + (int)n * 0; }\n' > "$work/probe.c"
if ! "$clang" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >"$work/probe.log" 2>&1; then
    echo "SKIP: $clang has no libFuzzer runtime (-fsanitize=fuzzer failed):"
    cat "$work/probe.log"
    exit 77
fi

# the UCX include flags configure chose
ucx_cppflags=$(sed -n 's/^UCX_CPPFLAGS = //p' "$builddir/test/Makefile" 2>/dev/null)
if ! "$clang" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I"$srcdir/ucx_ext" -I"$srcdir/ucx_ext/api" -I"$builddir/ucx_ext/api" \
        -I"$srcdir/toolchain/api" $ucx_cppflags \
        "$srcdir/test/fuzz/fuzz_frame.c" "$srcdir/ucx_ext/ifunc/frame.c" \
        -o "$work/fuzz_frame" >"$work/build.log" 2>&1; then
    echo "FAIL: cannot build the fuzz target:"
    cat "$work/build.log"
    exit 1
fi

mkdir "$work/corpus"
echo "fuzzing tc_frame_check_header for ${time_s} s"
"$work/fuzz_frame" -max_total_time="$time_s" -print_final_stats=1 -max_len=4096 \
    -rss_limit_mb=1024 -artifact_prefix="$work/" "$work/corpus" >"$work/fuzz.log" 2>&1
rc=$?
grep -E 'stat::number_of_executed_units|stat::new_units_added|Done [0-9]+ runs' "$work/fuzz.log"
if [ $rc -ne 0 ]; then
    echo "FAIL: the fuzzer found a crash (exit $rc):"
    tail -40 "$work/fuzz.log"
    ls "$work"/crash-* 2>/dev/null && od -An -tx1 "$work"/crash-* | head -20
    exit 1
fi
echo "PASS: no crash, no out-of-bounds read, validator promises held"
exit 0
