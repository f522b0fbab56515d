#!/bin/sh
# Fuzz the TCP bootstrap's handshake checks (the root's hello check and
# judgement, the member's verdict check) with libFuzzer for a bounded time
# (TC_FUZZ_TIME seconds, default 10). Needs clang with its libFuzzer
# runtime and the built libtwochains (for the job key's HMAC); without
# clang the test is skipped (exit 77) and says why.
set -u
srcdir=${TC_SRCDIR:?run from make check}
builddir=${TC_BUILDDIR:?run from make check}
clang=${TC_FUZZ_CC:-clang}
time_s=${TC_FUZZ_TIME:-10}

if ! command -v "$clang" >/dev/null 2>&1; then
    echo "SKIP: $clang is not installed (apt-get install clang)"
    exit 77
fi
if [ -n "${TC_SAN_FLAGS:-}" ]; then
    # as run_fuzz.sh does for its targets that link the libraries
    echo "SKIP: this build's libtwochains carries the configured sanitizer runtime" \
         "(TC_SAN_FLAGS=$TC_SAN_FLAGS), which cannot be linked beside clang's" \
         "libFuzzer; run it in a build without --enable-asan"
    exit 77
fi
work=$(mktemp -d /tmp/tc-fuzz-hello-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return (int)(d == 0) + (int)n * 0; }\n' > "$work/probe.c"
if ! "$clang" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >"$work/probe.log" 2>&1; then
    echo "SKIP: $clang has no libFuzzer runtime (-fsanitize=fuzzer failed):"
    cat "$work/probe.log"
    exit 77
fi

# the UCX flags configure chose
ucx_cppflags=$(sed -n 's/^UCX_CPPFLAGS = //p' "$builddir/test/Makefile" 2>/dev/null)
ucx_ldflags=$(sed -n 's/^UCX_LDFLAGS = //p' "$builddir/test/Makefile" 2>/dev/null)
ucx_libs=$(sed -n 's/^UCX_LIBS = //p' "$builddir/test/Makefile" 2>/dev/null)
libdir="$builddir/ucx_ext/.libs"
if ! "$clang" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I"$srcdir/ucx_ext" -I"$srcdir/ucx_ext/api" -I"$builddir/ucx_ext/api" $ucx_cppflags \
        "$srcdir/test/fuzz/fuzz_hello.c" "$srcdir/ucx_ext/bootstrap/tcp/tcp_wire.c" \
        -L"$libdir" -Wl,-rpath,"$libdir" -ltwochains $ucx_ldflags $ucx_libs -lcrypto \
        -o "$work/fuzz_hello" >"$work/build.log" 2>&1; then
    echo "FAIL: cannot build the fuzz target:"
    cat "$work/build.log"
    exit 1
fi

mkdir "$work/corpus"
echo "fuzzing the bootstrap hello and verdict checks for ${time_s} s"
"$work/fuzz_hello" -max_total_time="$time_s" -print_final_stats=1 -max_len=512 \
    -rss_limit_mb=1024 -artifact_prefix="$work/" "$work/corpus" >"$work/fuzz.log" 2>&1
rc=$?
grep -E 'stat::number_of_executed_units|stat::new_units_added|Done [0-9]+ runs' "$work/fuzz.log"
if [ $rc -ne 0 ]; then
    echo "FAIL: the fuzzer found a crash or a broken promise (exit $rc):"
    tail -40 "$work/fuzz.log"
    ls "$work"/crash-* 2>/dev/null && od -An -tx1 "$work"/crash-* | head -20
    exit 1
fi
echo "PASS: no crash, no out-of-bounds read, the checks' promises held"
exit 0
