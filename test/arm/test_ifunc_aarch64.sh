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
    --prefix "$work/pkgs" --target aarch64 --portable x86_64-linux-gnu,aarch64-linux-gnu >/dev/null
# The Portable receiver's JIT module for aarch64, against Debian's arm64
# libLLVM-14 (libllvm14:arm64, multiarch), beside the probe that loads it
llvm_a64=/usr/lib/aarch64-linux-gnu/libLLVM-14.so.1
[ -e "$llvm_a64" ] ||
    skip "no arm64 libLLVM-14 (dpkg --add-architecture arm64; apt-get install libllvm14:arm64)"
aarch64-linux-gnu-gcc "${cflags[@]}" -O2 -g -fPIC -shared \
    -I"$src/api" -I"$TC_BUILDDIR/ucx_ext/api" -I"$src" -I"$(llvm-config-14 --includedir)" \
    "$src/ifunc/jit_orc.c" -o "$work/libtwochains_jit.so" "$llvm_a64"

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

# Mixed architectures: one portable package (its bitcode is the same in the
# x86_64 and the aarch64 package: same sources, same clang), rank 0 under
# qemu-aarch64 receiving from x86_64 senders, and the other way round. Each
# sender sends the module of the receiver's architecture (published when
# the mailbox is made); the receiver compiles its own package's module of
# that hash (verify) and checks every effect.
{
    echo '#!/bin/sh'
    echo '# rank 0 runs the architecture $1 names, the other ranks the other one'
    echo 'case "$1:$UCX_TC_RANK" in'
    echo "    aarch64:0|x86_64:[1-9]*) shift; exec qemu-aarch64 $work/ifunc_probe -P $work/pkgs \"\$@\" ;;"
    echo "    *) shift; exec $TC_BUILDDIR/test/helpers/ifunc_probe -P $TC_BUILDDIR/test/twochains-pkgs \"\$@\" ;;"
    echo 'esac'
} >"$work/mixed.sh"
chmod +x "$work/mixed.sh"
# receiver architecture | TLS | processes | probe arguments
while IFS='|' read -r arch tls n args; do
    out=$work/out.txt
    rc=0
    UCX_TLS=$tls timeout 300 "$TC_BUILDDIR/src/tools/twochains-run" -n "$n" --timeout 240 -- \
        "$work/mixed.sh" "$arch" $args >"$out" 2>&1 || rc=$?
    oks=$(grep -c 'ifunc_probe rank [0-9]*: OK' "$out" || true)
    checked=$(grep -o 'checked [0-9]* frames' "$out" || echo "checked ? frames")
    if [ "$rc" != 0 ] || [ "$oks" != "$n" ] || ! grep -q 'rejected 0' "$out" ||
       ! grep -q ' 4 modules compiled' "$out" || grep -qE 'UCX +(WARN|ERROR)' "$out"; then
        echo "FAIL: mixed, $arch receiver, $tls, $n processes: $args (exit $rc)"
        cat "$out"
        failed=1
    else
        echo "ok: mixed, $arch receiver, $tls, $n processes, $args: $checked, 4 modules compiled, 0 rejected"
    fi
done <<'CASES'
aarch64|posix,self|2|-n 10 -m portable,portable-cached
x86_64|posix,self|2|-n 10 -m portable,portable-cached
aarch64|tcp,self|3|-n 5 -m local,portable-cached
x86_64|tcp,self|3|-n 5 -m local,portable-cached
CASES
exit "$failed"
