#!/usr/bin/env bash
#
# Two-Chains beside a CPU hog, with the defaults (wait policy included):
# stress-ng --cpu 2 --cpu-load 60 on this 2-core machine while
#  - the ifunc demo (2 processes: streaming indirect_put and server_side_sum
#    frames checked element by element and summed exactly, then a ping-pong
#    per mode) runs Local, Injected, Cached, Portable and Portable-Cached frames, and
#  - ifunc_probe (4 processes: 3 senders stream every jam in every mode into
#    rank 0 through a ring of 4 slots, so credits stall and wrap) checks
#    every effect exactly,
# each in copy and inplace placement, over posix and tcp, and
#  - mailbox_scale (a job of 4,096 ranks in which 2 talk: ping-pong, the
#    idle ring sleeps, 20 bursts each wake it; exact sums) over posix and tcp;
#  - ifunc_tear (compact frames written in torn pieces with pauses: none may
#    run early or with other bytes, none may be lost; its one deliberately
#    incomplete frame is the only reject) over posix and tcp;
#  - security confine: the hostile corpus (confine_probe), the tcbench jams
#    confined (ifunc_probe, 4 processes), and a 3-member group with a hostile
#    member whose members must agree (group_confine). Every run must
# verify all effects with zero rejects, and finish in its time bound.
# TC_STRESS_ROUNDS repeats the matrix (4 in make check, ~25 s; 100 in
# make check-long).
#
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
rounds=${TC_STRESS_ROUNDS:-4}
run=$TC_BUILDDIR/src/tools/twochains-run
pkgs=$TC_BUILDDIR/test/twochains-pkgs
work=$(mktemp -d /tmp/tc-stress.XXXXXX)
source "$TC_SRCDIR/test/stress/hog_lib.sh"
cleanup() { hog_stop; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

unset UCX_TC_WAIT_POLICY       # the defaults, as users run them

mk() { sed -n "s/^$1 = //p" "$TC_BUILDDIR/test/Makefile"; }
read -r -a ucx <<<"$(mk UCX_CPPFLAGS) $(mk UCX_LDFLAGS) $(mk UCX_LIBS)"
read -r -a san <<<"${TC_SAN_FLAGS:-}"
"$(mk CC)" -O2 "$TC_SRCDIR/contrib/examples/ifunc_demo.c" -o "$work/ifunc_demo" \
    -I"$TC_SRCDIR/ucx_ext/api" -I"$TC_BUILDDIR/ucx_ext/api" "${san[@]}" \
    -L"$TC_BUILDDIR/ucx_ext/.libs" -Wl,-rpath,"$TC_BUILDDIR/ucx_ext/.libs" -ltwochains \
    "${ucx[@]}" -pthread

hog_start

runs=0 failed=0
check() {   # check NAME LOG EXPECTED-PATTERN COUNT
    local n
    n=$(grep -Ec -- "$3" "$2" || true)
    if [ "$n" != "$4" ] || grep -Eq 'UCX +(WARN|ERROR|FATAL)|timed out|rejected [1-9]|frames rejected|FAILED' "$2"; then
        echo "FAIL: $1 (expected $4 lines /$3/, got $n):"; tail -20 "$2"; failed=$((failed + 1))
    fi
}
for round in $(seq "$rounds"); do
    for tls in posix,self tcp,self; do
        for placement in copy inplace; do
            log=$work/demo.log
            # in-place code runs where its sender can still write: trust only
            security=verify; [ "$placement" = inplace ] && security=trust
            UCX_TLS=$tls UCX_TC_IFUNC_PLACEMENT=$placement UCX_TC_IFUNC_SECURITY=$security \
                "$run" -n 2 --timeout 120 -- \
                "$work/ifunc_demo" -P "$pkgs" -n 300 >"$log" 2>&1 || true
            check "demo round $round $tls $placement" "$log" \
                '(array verified; server_side_sum: 100 frames, sum -?[0-9]+ verified)|(latency over)|(all effects verified)' 11
            runs=$((runs + 1))
            log=$work/probe.log
            UCX_TLS=$tls "$run" -n 4 --timeout 120 -- "$TC_BUILDDIR/test/helpers/ifunc_probe" \
                -n 30 -d 4 -e -p "$placement" -s "$security" >"$log" 2>&1 || true
            check "probe round $round $tls $placement" "$log" 'ifunc_probe rank [0-3]: OK' 4
            runs=$((runs + 1))
        done
        # rings that sleep and wake: 20 bursts, each into a ring its
        # receiver let sleep (a short idle bound makes every gap a sleep)
        log=$work/scale.log
        UCX_TLS=$tls UCX_TC_IFUNC_RING_IDLE=64 "$run" -n 2 --timeout 120 -- \
            "$TC_BUILDDIR/test/helpers/mailbox_scale" --job 4096 --iters 200 --cycles 20 \
            >"$log" 2>&1 || true
        check "sleeping rings round $round $tls" "$log" 'mailbox_scale rank (0|4095): OK' 2
        runs=$((runs + 1))
        log=$work/tear.log
        UCX_TLS=$tls "$run" -n 2 --timeout 120 -- "$TC_BUILDDIR/test/helpers/ifunc_tear" \
            >"$log" 2>&1 || true
        if [ "$(grep -Ec 'ifunc_tear rank [01]: OK' "$log" || true)" != 2 ] ||
           ! grep -q 'ran 41, rejected 1 (truncated 1)' "$log" ||
           grep -Eq 'UCX +(ERROR|FATAL)|FAILED' "$log"; then
            echo "FAIL: tear round $round $tls:"; tail -20 "$log"; failed=$((failed + 1))
        fi
        runs=$((runs + 1))
        # security confine: the hostile corpus into a mailbox (each case
        # refused or trapped, the legitimate frame after it exact, nothing
        # outside the grant changed), the tcbench jams confined with every
        # effect checked, and a group with a hostile member that agrees
        log=$work/confine.log
        UCX_TLS=$tls "$run" -n 2 --timeout 120 -- "$TC_BUILDDIR/test/helpers/confine_probe" \
            -r 2 >"$log" 2>&1 || true
        if [ "$(grep -Ec 'confine_probe rank [01]: OK' "$log" || true)" != 2 ] ||
           grep -Eq 'UCX +(ERROR|FATAL)|FAIL' "$log"; then
            echo "FAIL: confine corpus round $round $tls:"; tail -20 "$log"; failed=$((failed + 1))
        fi
        runs=$((runs + 1))
        log=$work/confine_probe.log
        UCX_TLS=$tls UCX_TC_IFUNC_CONFINE_OWN=y UCX_TC_IFUNC_CONFINE_ALLOW=tcbench_ping_reply \
            "$run" -n 4 --timeout 120 -- "$TC_BUILDDIR/test/helpers/ifunc_probe" -n 20 -d 4 \
            -s confine -m portable,portable-cached -j indirect_put,server_side_sum,ping \
            >"$log" 2>&1 || true
        check "confined probe round $round $tls" "$log" 'ifunc_probe rank [0-3]: OK' 4
        runs=$((runs + 1))
        log=$work/group_confine.log
        UCX_TLS=$tls UCX_TC_IFUNC_SECURITY=confine UCX_TC_IFUNC_CONFINE_OWN=y "$run" -n 3 \
            --timeout 120 -- "$TC_BUILDDIR/test/helpers/group_confine" -P "$pkgs" -c 60 -H 2 \
            >"$log" 2>&1 || true
        if [ "$(grep -Eo 'chain [0-9a-f]+ digest ([0-9a-f]+) reference \1 run 189 rejected 3 status Success' "$log" | sort -u | wc -l)" != 1 ] ||
           [ "$(grep -Ec 'group_confine rank [0-2]: chain' "$log" || true)" != 3 ]; then
            echo "FAIL: confining group round $round $tls:"; tail -20 "$log"; failed=$((failed + 1))
        fi
        runs=$((runs + 1))
    done
    echo "stress round $round: $((runs - failed)) of $runs runs verified so far"
done
[ "$failed" = 0 ] || { echo "FAIL: $failed of $runs stressed runs"; exit 1; }
echo "PASS: $runs runs beside stress-ng --cpu 2 --cpu-load 60, every effect verified, no reject but the deliberate one"
