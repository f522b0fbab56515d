#!/usr/bin/env bash
#
# A replicated group of mixed architectures: the key-value store of
# contrib/examples/replicated_kv.c with x86_64 members and an aarch64
# member under qemu-aarch64, through a kill and a join
# (contrib/examples/replicated_kv_demo.sh: 3 members write, rank 2 is
# killed mid-stream, a new process joins with the state and writes too).
# The jams are Portable: one tckv package of bitcode, each member runs
# its own architecture's module of the hash the frame names, compiled by
# ORC when it became a member. Every live member must end with one state
# digest, equal to the reference replayed from the delivered sequence.
#
# The aarch64 member is the project cross-built (test/arm/aarch64_build.sh:
# ucx_ext, src/ and replicated_kv.c against Debian's arm64 UCX and LLVM).
# Cases (architecture of rank 0, 1, 2 and of the joiner):
#   aarch64 x86_64 x86_64 x86_64   the aarch64 member survives the kill and
#                                  sponsors the x86_64 joiner (its state)
#   x86_64 x86_64 aarch64 aarch64  the aarch64 member is killed, and an
#                                  aarch64 process joins with state from x86_64
# over posix and tcp. TC_A64_GROUP_ROUNDS repeats every case (check-long).
# qemu-user emulates the instructions, not an Arm memory model or timing.
# Skipped (77) with the reason when a piece is not installed.
#
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
rounds=${TC_A64_GROUP_ROUNDS:-1}

work=$(mktemp -d /tmp/tc-a64-group.XXXXXX)
trap 'rm -rf "$work"' EXIT
a64=$work
# shellcheck source=test/arm/aarch64_build.sh
source "$TC_SRCDIR/test/arm/aarch64_build.sh"
a64_require c++
a64_build_runtime
a64_build_group
a64_build_jit
a64_build_pkg tckv
a64_cflags="-I$TC_SRCDIR/test/packages/tckv"
a64_link "$work/replicated_kv" "$TC_SRCDIR/contrib/examples/replicated_kv.c"

# the x86_64 member: the same replicated_kv.c, as make check builds it
x86_kv=$TC_BUILDDIR/test/helpers/replicated_kv

# The demo starts every member as KV_BINARY -P PKGS ...; this member picks
# its architecture by rank (the joiner has none: TC_A64_JOINER) and an
# aarch64 member takes the aarch64 package (getopt keeps the last -P).
{
    echo '#!/bin/sh'
    echo 'case "${UCX_TC_RANK:-joiner}" in'
    echo '    0) arch=$TC_A64_RANK0 ;; 1) arch=$TC_A64_RANK1 ;; 2) arch=$TC_A64_RANK2 ;;'
    echo '    *) arch=$TC_A64_JOINER ;;'
    echo 'esac'
    echo "echo \"\${UCX_TC_RANK:-joiner} \$arch\" >>$work/launched"
    echo "[ \"\$arch\" = aarch64 ] && exec qemu-aarch64 $work/replicated_kv \"\$@\" -P $work/pkgs"
    echo "exec $x86_kv \"\$@\""
} >"$work/member.sh"
chmod +x "$work/member.sh"

failed=0
for ((round = 0; round < rounds; ++round)); do
    # architectures of rank 0, 1, 2, the joiner | TLS
    while IFS='|' read -r archs tls; do
        read -r TC_A64_RANK0 TC_A64_RANK1 TC_A64_RANK2 TC_A64_JOINER <<<"$archs"
        export TC_A64_RANK0 TC_A64_RANK1 TC_A64_RANK2 TC_A64_JOINER
        out=$work/out.txt
        rc=0
        : >"$work/launched"
        UCX_TLS=$tls timeout 600 "$TC_SRCDIR/contrib/examples/replicated_kv_demo.sh" \
            "$work/member.sh" "$TC_BUILDDIR/test/twochains-pkgs" portable >"$out" 2>&1 || rc=$?
        # the members ran as asked: rank and architecture of each launch
        launched=$(sort "$work/launched" | tr '\n' ' ')
        expected="0 $TC_A64_RANK0 1 $TC_A64_RANK1 2 $TC_A64_RANK2 joiner $TC_A64_JOINER "
        if [ "$rc" != 0 ] || ! grep -q 'hold one state' "$out" || [ "$launched" != "$expected" ]; then
            echo "launched: $launched"
            echo "FAIL: members $archs (rank 0, 1, 2, joiner), $tls (exit $rc)"
            cat "$out"
            failed=1
        else
            echo "ok: members $archs (rank 0, 1, 2, joiner), $tls: $(tail -1 "$out")"
        fi
    done <<'CASES'
aarch64 x86_64 x86_64 x86_64|posix,self
x86_64 x86_64 aarch64 aarch64|tcp,self
CASES
done
exit "$failed"
