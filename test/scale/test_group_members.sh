#!/usr/bin/env bash
#
# One group of TC_GROUP_MEMBERS real processes (default 256; one member
# each, test/helpers/group_fault_probe): urgent SMC, batched SMC, and SMC
# with one RDMC message of 64 KiB in the same total order, over posix; and
# batched over tcp. Every member must deliver every message of every member
# (N x 20, plus nothing lost around the large one), report one hash chain
# identical at all N members, and the exact byte sum the senders' pattern
# gives.
#
# 256 processes share this machine's 2 cores (128 per core, where a job
# runs one per core). The failure detector is paced to that: heartbeats
# every 200 ms (each is N - 1 puts, N(N - 1) per interval in all) and a
# 60 s suspicion, because urgent SMC here stalls members for seconds while
# each waits its turn for a core. Everything else is the default. The RDMC
# pool is (N + 1) buffers of the largest message per member, so 1 MiB
# messages would need 64 GiB across 256 members: 64 KiB needs 4 GiB.
#
# Run by make check-long (about 5 minutes); not part of make check.
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
members=${TC_GROUP_MEMBERS:-256}
count=20 max=64 large=65536
run=$TC_BUILDDIR/src/tools/twochains-run
probe=$TC_BUILDDIR/test/helpers/group_fault_probe
work=$(mktemp -d /tmp/tc-gmembers.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -x "$probe" ] || { echo "FAIL: $probe is not built"; exit 1; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# what group_fault_probe sends: message k of rank r has 1 + k % max bytes
# (rank 0's message count/2 has LARGE bytes with -L), byte i being
# (r * 31 + k * 7 + i) mod 256
expected_sum() {   # LARGE (0: none)
    awk -v n="$members" -v c="$count" -v m="$max" -v big="$1" 'BEGIN {
        s = 0
        for (r = 0; r < n; ++r) for (k = 0; k < c; ++k) {
            len = 1 + k % m
            if (big > 0 && r == 0 && k == int(c / 2)) len = big
            for (i = 0; i < len; ++i) s += (r * 31 + k * 7 + i) % 256
        }
        printf "%d\n", s }'
}

runs=0 failed=0
case_run() {   # NAME TLS LARGE -- PROBE-ARGS
    local name=$1 tls=$2 big=$3 log sum chains reports start=$SECONDS
    shift 4
    log=$work/$name.log
    sum=$(expected_sum "$big")
    runs=$((runs + 1))
    if ! UCX_TLS=$tls UCX_TC_HEARTBEAT_INTERVAL=200ms UCX_TC_SUSPECT_TIMEOUT=60s \
         UCX_TC_BOOTSTRAP_TIMEOUT=120s "$run" -n "$members" --timeout 600 -- \
         "$probe" -c "$count" -r 50 -s "$max" "$@" >"$log" 2>&1; then
        echo "FAIL: $name: exit status"; grep -v '\] view [0-9]' "$log" | tail -15
        failed=$((failed + 1)); return
    fi
    reports=$(grep -Ec "\] result chain [0-9a-f]+ count $((members * count)) views 0 .* status Success sum $sum$" "$log" || true)
    chains=$(sed -n 's/.*\] result chain \([0-9a-f]*\) count.*/\1/p' "$log" | sort -u | wc -l)
    if [ "$reports" != "$members" ] || [ "$chains" != 1 ]; then
        echo "FAIL: $name: $reports of $members members delivered $((members * count)) messages" \
             "with sum $sum; $chains distinct chains"
        grep '\] result' "$log" | sort | uniq -c | sort -rn | head -5
        failed=$((failed + 1)); return
    fi
    echo "ok: $name: $members members, $((members * count)) messages each, sum $sum," \
         "one chain, $((SECONDS - start)) s"
}

case_run urgent-posix posix,self 0 --
case_run batched-posix posix,self 0 -- -b
case_run rdmc-posix posix,self "$large" -- -L "$large"
case_run batched-tcp tcp,self 0 -- -b
echo "$((runs - failed)) of $runs cases passed"
[ "$failed" -eq 0 ]
