#!/usr/bin/env bash
#
# The Two-Chains runtime end to end on aarch64: ucx_ext's C sources and
# test/helpers/ifunc_probe.c cross-built with aarch64-linux-gnu-gcc against Debian's
# arm64 UCX (libucx-dev:arm64, multiarch), the tcbench package built with
# `twochains-pkg --target aarch64`, and the processes run under qemu-aarch64
# by twochains-run: Local, Injected (W^X copies and RWX in place, so the
# I-cache maintenance runs) and Cached frames over posix and tcp, 2 and 4
# processes, ring wrap-around with credit stalls, and the wfe wait policy.
# qemu-user emulates the instructions, not an Arm memory model or timing:
# this proves the aarch64 build and code paths, not Arm performance.
# Skipped (77) with the reason when a piece is not installed.
#
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"

skip() { echo "SKIP: $*"; exit 77; }
command -v aarch64-linux-gnu-gcc >/dev/null || skip "no aarch64-linux-gnu-gcc (gcc-aarch64-linux-gnu)"
command -v qemu-aarch64 >/dev/null || skip "no qemu-aarch64 (qemu-user)"
[ -e /usr/lib/aarch64-linux-gnu/libucp.so ] ||
    skip "no arm64 UCX (dpkg --add-architecture arm64; apt-get install libucx-dev:arm64)"
[ -e /usr/lib/aarch64-linux-gnu/libcrypto.so ] ||
    skip "no arm64 libcrypto (dpkg --add-architecture arm64; apt-get install libssl-dev:arm64)"

work=$(mktemp -d /tmp/tc-aarch64.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$TC_SRCDIR/ucx_ext
mk() { sed -n "s/^$1 = //p" "$TC_BUILDDIR/test/Makefile"; }
# the library's own source list, less PMIx (no arm64 PMIx here)
lib_sources=()
# (outside the calling make's MAKEFLAGS, which would add directory chatter)
for f in $(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
           make -s --no-print-directory -C "$TC_BUILDDIR/ucx_ext" print-sources); do
    case "$f" in
        bootstrap/boot_pmix.c) ;;
        *.c) lib_sources+=("$src/$f") ;;
    esac
done
# the project's own language and warning flags (same gcc release), no sanitizers
read -r -a cflags <<<"$(mk TC_CFLAGS_STD) $(mk TC_WARN_CFLAGS)"
aarch64-linux-gnu-gcc "${cflags[@]}" -O2 -g -pthread \
    -I"$src/api" -I"$TC_BUILDDIR/ucx_ext/api" -I"$src" -I"$TC_SRCDIR/toolchain/api" \
    -I"$TC_SRCDIR/test/packages/tcbench" -DTC_BUILDDIR="\"$work\"" \
    "${lib_sources[@]}" \
    "$TC_SRCDIR/test/helpers/ifunc_probe.c" -o "$work/ifunc_probe" -lucp -luct -lucs -lcrypto -ldl -lm
"$TC_BUILDDIR/toolchain/twochains-pkg" build --name tcbench --src "$TC_SRCDIR/test/packages/tcbench" \
    --prefix "$work/pkgs" --target aarch64 >/dev/null

failed=0
# TLS | probe arguments | processes | wait policy
while IFS='|' read -r tls args n policy; do
    out=$work/out.txt
    rc=0
    UCX_TLS=$tls UCX_TC_WAIT_POLICY=$policy timeout 300 "$TC_BUILDDIR/src/tools/twochains-run" \
        -n "$n" --timeout 240 -- qemu-aarch64 "$work/ifunc_probe" -P "$work/pkgs" $args \
        >"$out" 2>&1 || rc=$?
    oks=$(grep -c 'ifunc_probe rank [0-9]*: OK' "$out" || true)
    checked=$(grep -o 'checked [0-9]* frames' "$out" || echo "checked ? frames")
    if [ "$rc" != 0 ] || [ "$oks" != "$n" ] || ! grep -q 'rejected 0' "$out" ||
       grep -qE 'UCX +(WARN|ERROR)' "$out"; then
        echo "FAIL: $tls, $n processes, $policy: $args (exit $rc)"
        cat "$out"
        failed=1
    else
        echo "ok: aarch64 $tls, $n processes, $policy, $args: $checked, 0 rejected"
    fi
done <<'CASES'
posix,self|-n 20 -p copy|2|sleep
posix,self|-n 20 -p inplace -s trust|2|sleep
tcp,self|-n 10 -p copy|2|sleep
posix,self|-n 10 -p copy|4|sleep
posix,self|-d 4 -n 500 -m mixed -e|2|sleep
posix,self|-n 10 -p copy|2|wfe
CASES
exit "$failed"
