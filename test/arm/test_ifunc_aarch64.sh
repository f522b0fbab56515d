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

work=$(mktemp -d /tmp/tc-aarch64.XXXXXX)
trap 'rm -rf "$work"' EXIT
a64=$work
# shellcheck source=test/arm/aarch64_build.sh
source "$TC_SRCDIR/test/arm/aarch64_build.sh"
a64_require
a64_build_runtime
a64_build_pkg tcbench
a64_build_jit
a64_cflags="-I$TC_SRCDIR/test/packages/tcbench -DTC_BUILDDIR=\"$work\""
a64_link "$work/ifunc_probe" "$TC_SRCDIR/test/helpers/ifunc_probe.c"

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

# Security confine on aarch64 (make check-long, TC_A64_CONFINE=1: three
# confined compiles under qemu take minutes): the receiver under qemu
# confines its own modules (UCX_TC_IFUNC_CONFINE_OWN=y) and checks every
# effect; no run traps
if [ -z "${TC_A64_CONFINE:-}" ]; then
    echo "not run here: confined jams on an aarch64 receiver (make check-long, TC_A64_CONFINE=1)"
    exit "$failed"
fi
out=$work/out.txt
rc=0
UCX_TLS=posix,self UCX_TC_IFUNC_CONFINE_OWN=y UCX_TC_IFUNC_CONFINE_ALLOW=tcbench_ping_reply \
    timeout 300 "$TC_BUILDDIR/src/tools/twochains-run" -n 2 --timeout 240 -- \
    "$work/mixed.sh" aarch64 -n 10 -s confine -m portable,portable-cached \
    -j indirect_put,server_side_sum,ping >"$out" 2>&1 || rc=$?
if [ "$rc" != 0 ] || [ "$(grep -c 'ifunc_probe rank [0-9]*: OK' "$out" || true)" != 2 ] ||
   ! grep -q 'confined runs: 60; trapped: memory 0, fuel 0, stack 0, unreachable 0' "$out" ||
   grep -qE 'UCX +(WARN|ERROR)' "$out"; then
    echo "FAIL: confined jams on an aarch64 receiver (exit $rc)"
    cat "$out"
    failed=1
else
    echo "ok: confined jams on an aarch64 receiver, posix,self: 60 confined runs, none trapped, every effect checked"
fi
exit "$failed"
