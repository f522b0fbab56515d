#!/usr/bin/env bash
#
# Groups beside a CPU hog, with the defaults (wait policy included):
# stress-ng --cpu 2 --cpu-load 60 on this 2-core machine while real
# processes under twochains-run multicast through <twochains/group.h>
# (test/helpers/group_probe, which checks every delivered byte and the
# exact count itself) over posix and tcp:
#  - 3 members, all senders, urgent and batched SMC;
#  - 5 members, one sender, a window of 8 (so the sender waits on slots);
#  - 3 members mixing SMC and RDMC messages in one total order;
#  - 3 members, span delivery (the C deliver_span callback), batched;
#  - 16 shards over 3 members: 15 stay quiet while one streams, then send;
# and a view change over posix and tcp: one of 3 (then 5) members sending through
# test/helpers/group_fault_probe is killed with SIGKILL mid-stream; and a join
# into 3 members that hold a job key: a joiner without it is refused, one
# with it enters with the state.
# Every member must report the exact count, zero bad messages, and one
# hash chain identical at every member (the same sequence, in the same
# order); after the kill every survivor exits cleanly with one view change
# and the same chain (deliveries and views). TC_STRESS_ROUNDS repeats the
# matrix (1 in make check; 50 in make check-long); TC_STRESS_SCALE is the
# percentage of the full message counts each multicast case sends (33 in
# make check, 100 by default and in make check-long).
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
rounds=${TC_STRESS_ROUNDS:-2}
scale=${TC_STRESS_SCALE:-100}
run=$TC_BUILDDIR/src/tools/twochains-run
probe=$TC_BUILDDIR/test/helpers/group_probe
fault_probe=$TC_BUILDDIR/test/helpers/group_fault_probe
source "$TC_SRCDIR/contrib/bench/perftest_lib.sh"   # free_port
work=$(mktemp -d /tmp/tc-gstress.XXXXXX)
source "$TC_SRCDIR/test/stress/hog_lib.sh"
cleanup() { hog_stop; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

[ -x "$probe" ] || { echo "FAIL: $probe is not built"; exit 1; }
unset UCX_TC_WAIT_POLICY UCX_TC_SMC_MODE   # the defaults, as users run them

hog_start

runs=0 failed=0
# case NAME MEMBERS EXPECTED-COUNT ENV -- PROBE-ARGS
case_run() {
    local name=$1 n=$2 expect=$3 env=$4 log chains reports
    shift 5
    log=$work/$name.log
    runs=$((runs + 1))
    local start=$SECONDS
    if ! env $env UCX_TLS=$tls "$run" -n "$n" --timeout 240 -- "$probe" "$@" >"$log" 2>&1; then
        echo "FAIL: $name ($tls): exit status"; tail -15 "$log"; failed=$((failed + 1)); return
    fi
    reports=$(grep -Ec "\] group 0 chain [0-9a-f]+ count $expect bad 0$" "$log" || true)
    chains=$(sed -n 's/.*\] group 0 chain \([0-9a-f]*\) count.*/\1/p' "$log" | sort -u | wc -l)
    if [ "$reports" != "$n" ] || [ "$chains" != 1 ] ||
       grep -Eq 'UCX +(WARN|ERROR|FATAL)' "$log"; then
        echo "FAIL: $name ($tls): $reports of $n members report count $expect, $chains distinct chains:"
        tail -15 "$log"; failed=$((failed + 1)); return
    fi
    echo "ok: $name ($tls): $n members, $expect messages each, one chain, $((SECONDS - start)) s"
}

# shards_run NAME COUNT: 16 groups over 3 members (group_probe -G 16); every
# group reported by all 3 with one chain and its exact count
shards_run() {
    local name=$1 c=$2 log g bad=0 late
    log=$work/$name.log
    runs=$((runs + 1))
    late=$(( c / 50 > 0 ? c / 50 : 1 ))
    if ! env UCX_TLS=$tls "$run" -n 3 --timeout 240 -- "$probe" -G 16 -c "$c" -s 128 >"$log" 2>&1 ||
       grep -Eq 'UCX +(WARN|ERROR|FATAL)' "$log"; then
        echo "FAIL: $name ($tls)"; tail -15 "$log"; failed=$((failed + 1)); return
    fi
    for g in $(seq 0 15); do
        local expect=$(( 3 * (g == 0 ? c : late) ))
        [ "$(grep -Ec "\] group $g chain [0-9a-f]+ count $expect bad 0$" "$log")" = 3 ] &&
        [ "$(sed -n "s/.*\] group $g chain \([0-9a-f]*\) count.*/\1/p" "$log" | sort -u | wc -l)" = 1 ] ||
            bad=1
    done
    if [ "$bad" != 0 ]; then
        echo "FAIL: $name ($tls): a group's counts or chains differ"; tail -20 "$log"
        failed=$((failed + 1)); return
    fi
    echo "ok: $name ($tls): 16 shards, every one complete and in one order"
}

# kill_run NAME N VICTIM TLS: N fault-probe members, SIGKILL one
kill_run() {
    local name=$1 n=$2 victim=$3 tls=$4 port r pids=() t chains views
    runs=$((runs + 1))
    port=$(free_port)
    for ((r = 0; r < n; ++r)); do
        UCX_TLS=$tls UCX_TC_SIZE=$n UCX_TC_RANK=$r UCX_TC_ROOT=127.0.0.1:$port \
            "$fault_probe" -c 6000 -r 4000 > "$work/$name.$r" 2>&1 &
        pids+=($!)
    done
    # bounded without a watchdog: every wait of a member ends within
    # UCX_TC_GROUP_TIMEOUT without progress, every bootstrap step within
    # UCX_TC_BOOTSTRAP_TIMEOUT
    for ((r = 0; r < n; ++r)); do
        for ((t = 0; t < 3000; ++t)); do grep -q '^ready' "$work/$name.$r" && break; sleep 0.01; done
    done
    sleep 0.3
    kill -9 "${pids[$victim]}"
    local bad=0
    for ((r = 0; r < n; ++r)); do
        if [ "$r" = "$victim" ]; then wait "${pids[$r]}" 2>/dev/null || true; continue; fi
        wait "${pids[$r]}" || { echo "FAIL: $name: survivor $r exited $?"; tail -5 "$work/$name.$r"; bad=1; }
    done
    chains=$(for ((r = 0; r < n; ++r)); do [ "$r" = "$victim" ] && continue
             sed -n 's/^result chain \([0-9a-f]*\) count \([0-9]*\) views \([0-9]*\).*/\1 \2 \3/p' "$work/$name.$r"; done |
             sort -u)
    views=$(awk '{print $3}' <<<"$chains" | sort -u)
    if [ "$bad" -ne 0 ] || [ "$(grep -c . <<<"$chains")" != 1 ] || [ "$views" != 1 ]; then
        echo "FAIL: $name: survivors disagree or saw $views view changes: $chains"
        failed=$((failed + 1)); return
    fi
    echo "ok: $name: $((n - 1)) survivors of $n, one view change, one chain ($(awk '{print $2}' <<<"$chains") delivered)"
}

# join_run NAME TLS: 3 members with a job key; a joiner without the key is
# refused, then one with it joins through rank 2
join_run() {
    local name=$1 tls=$2 port base r pids=() t chains key="UCX_TC_JOB_KEY=stress job key, long enough"
    runs=$((runs + 1))
    port=$(free_port)
    base=$(( (RANDOM % 8000) + 10000 ))   # join ports, below free_port's range
    for ((r = 0; r < 3; ++r)); do
        env "$key" UCX_TLS=$tls UCX_TC_SIZE=3 UCX_TC_RANK=$r UCX_TC_ROOT=127.0.0.1:$port \
            "$fault_probe" -c 12000 -r 4000 -J "$base" > "$work/$name.$r" 2>&1 &
        pids+=($!)
    done
    for ((r = 0; r < 3; ++r)); do
        for ((t = 0; t < 3000; ++t)); do grep -q '^ready' "$work/$name.$r" && break; sleep 0.01; done
    done
    local bad=0 rc=0
    UCX_TLS=$tls "$fault_probe" -c 10 -j "127.0.0.1:$((base + 2))" > "$work/$name.stranger" 2>&1 || rc=$?
    if [ "$rc" != 4 ] || ! grep -q 'did not prove the job key' "$work/$name.stranger"; then
        echo "FAIL: $name: a joiner without the key was not refused (exit $rc)"; bad=1
    fi
    env "$key" UCX_TLS=$tls "$fault_probe" -c 1000 -r 4000 -j "127.0.0.1:$((base + 2))" \
        > "$work/$name.3" 2>&1 &
    pids+=($!)
    for ((r = 0; r < 4; ++r)); do
        wait "${pids[$r]}" || { echo "FAIL: $name: process $r exited $?"; tail -5 "$work/$name.$r"; bad=1; }
    done
    chains=$(for r in 0 1 2 3; do
                 sed -n 's/^result chain \([0-9a-f]*\) count \([0-9]*\).*/\1 \2/p' "$work/$name.$r"
             done | sort -u)
    if [ "$bad" -ne 0 ] || [ "$(grep -c . <<<"$chains")" != 1 ] || [ "$(awk '{print $2}' <<<"$chains")" != 37000 ] ||
       [ "$(grep -l '^view 2 0,1,2,3' "$work/$name".[0-3] | wc -l)" != 4 ]; then
        echo "FAIL: $name: members and joiner disagree: $chains"
        failed=$((failed + 1)); return
    fi
    echo "ok: $name: a stranger refused, the keyed joiner in, 37000 delivered everywhere, one chain"
}

for round in $(seq "$rounds"); do
    for tls in posix,self tcp,self; do
        join_run "join-with-key-$round-${tls%%,*}" "$tls"
    done
    for tls in posix,self tcp,self; do
        kill_run "kill-of-3-$round-${tls%%,*}" 3 $((round % 3)) "$tls"
        kill_run "kill-of-5-$round-${tls%%,*}" 5 $(((round + 2) % 5)) "$tls"
    done
    for tls in posix,self tcp,self; do
        if [ "$tls" = posix,self ]; then c=30000 large=4000000; else c=3000 large=300000; fi
        c=$((c * scale / 100))
        case_run "urgent-all-$round" 3 $((3 * c)) "UCX_TC_SMC_MODE=urgent" -- -c "$c" -s 512
        case_run "batched-all-$round" 3 $((3 * c)) "UCX_TC_SMC_MODE=batched" -- -c "$c" -s 512
        case_run "one-sender-window8-$round" 5 "$c" "UCX_TC_SMC_MODE=urgent" -- -o -c "$c" -s 128 -w 8
        case_run "smc-and-rdmc-$round" 3 $((3 * 100)) "UCX_TC_SMC_MODE=urgent" -- -c 100 -s 256 -L "$large"
        case_run "spans-batched-$round" 3 $((3 * c)) "UCX_TC_SMC_MODE=batched" -- -S -c "$c" -s 512
        shards_run "shards-16-$round" "$c"
    done
done

hog_alive
if [ "$failed" -ne 0 ]; then
    echo "FAIL: $failed of $runs group runs beside stress-ng"
    exit 1
fi
echo "PASS: $runs group runs beside stress-ng --cpu 2 --cpu-load 60, default wait policy: exact counts, identical chains"
