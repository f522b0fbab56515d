#!/usr/bin/env bash
#
# The SMC speed targets in one run of interleaved rounds (posix,self, 100 B,
# all senders, the default wait policy), each target the median of its
# per-round values or ratios: this host changes speed regime within a minute,
# so only points of the same round are compared.
#
#   1, 2  batched / urgent delivered rate, N = 3 and N = 5, in one process
#         (twochains-perf --inproc) and as N processes (twochains-run)
#   3     10 KB batched, 3 processes: delivered bytes per member over
#         ucp_put_bw at the batch's put size (B_eff slots), same round
#   4     one message at a time, N = 3: batched p50 <= urgent p50 + T
#   5     puts per message at saturation <= 1.2 (N^2+N-2) / B_eff
#   shards: 64 idle groups beside an active one (rate / alone >= 0.9), and
#         8 active groups together (rate / one group >= 0.8)
#   also: span vs per-message delivery, threaded senders (T = 1, 2, 4), and
#         the ucx_perftest shapes ucp_smc_bw / ucp_smc_lat, urgent and batched
#
# One JSON object per point (with "point" and "round") in
# contrib/bench/results/smc_targets/smc_targets.jsonl, the summary in
# summary.txt, plots beside them.
#
#   contrib/bench/smc_targets.sh [ROUNDS (default 7)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TC_BUILD:-$here/../../build}
bin=$build/src/tools
perftest=$build/contrib/ucx_perftest/ucx_perftest
out=$here/results/smc_targets
rounds=${1:-7}
source "$here/perftest_lib.sh"

export UCX_TLS=posix,self   # and the default wait policy, unless UCX_TC_WAIT_POLICY is set
[ -x "$perftest" ] || { echo "smc_targets: build the patched ucx_perftest first (make perftest)" >&2; exit 1; }
mkdir -p "$out"
jsonl=$out/smc_targets.jsonl
: > "$jsonl"
echo "# $(nproc) cores, UCX_TC_WAIT_POLICY=${UCX_TC_WAIT_POLICY:-adaptive (default)}, $rounds rounds" >&2

r=0
inproc() { "$bin/twochains-perf" --inproc --json --window 256 "$@"; }
procs() {  # procs N ARGS: rank 0's JSON line
    local n=$1
    shift
    "$bin/twochains-run" -n "$n" --timeout 180 -- "$bin/twochains-perf" --json --window 256 "$@" |
        sed -n 's/^\[0\] //p'
}
smc_shape() {   # smc_shape SHAPE MODE ITERS: the patched ucx_perftest, pinned pair
    local shape=$1 mode=$2 iters=$3 port final
    port=$(free_port)
    UCX_TC_SMC_MODE=$mode taskset -c 0 "$perftest" -p "$port" >/dev/null 2>&1 &
    local server=$!
    sleep 0.5
    final=$(UCX_TC_SMC_MODE=$mode taskset -c 1 timeout 120 "$perftest" localhost -p "$port" \
                -t "$shape" -s 100 -n "$iters" 2>/dev/null | sed -n 's/^Final: *//p')
    wait "$server" 2>/dev/null || true
    set -- $final
    [ $# -ge 7 ] || { echo "{\"shape\":\"$shape\",\"mode\":\"$mode\",\"error\":\"failed\"}"; return; }
    printf '{"shape":"%s","mode":"%s","payload_bytes":100,"iterations":%s,"lat_p50_us":%s,"lat_avg_us":%s,"MB/s":%s,"msg_rate":%s}\n' \
        "$shape" "$mode" "$1" "$2" "$3" "$5" "$7"
}
field() { sed -n "s/.*\"$2\":\\([0-9.eE+-]*\\).*/\\1/p" <<<"$1"; }

for ((r = 1; r <= rounds; ++r)); do
    echo "# round $r of $rounds" >&2
    for n in 3 5; do
        iters=$(( n == 3 ? 600000 : 300000 ))   # batched runs of 0.1 s swing with the host
        inproc -t smc_bw -s 100 --members "$n" -n "$iters" | emit "n${n}_inproc_urgent"
        inproc -t smc_bw -s 100 --members "$n" -n "$iters" --mode batched | emit "n${n}_inproc_batched"
        procs "$n" -t smc_bw -s 100 -n "$iters" | emit "n${n}_procs_urgent"
        procs "$n" -t smc_bw -s 100 -n "$iters" --mode batched | emit "n${n}_procs_batched"
    done
    inproc -t smc_bw -s 100 --members 3 -n 600000 --mode batched --deliver message |
        emit n3_inproc_batched_per_message

    # 10 KB, and ucp_put_bw of one batch's bytes (B_eff slots of 10 KB + header)
    # the window of 64 (the tool's default): with 256 the rings outgrow the caches
    big=$(procs 3 -t smc_bw -s 10000 -n 20000 --window 64 --mode batched)
    emit kb10_procs_batched <<<"$big"
    b_eff=$(field "$big" batch_avg)
    put=$(python3 -c "import math; print(max(1, round($b_eff)) * ((16 + 10000 + 63) // 64 * 64))")
    perftest_json ucp_put_bw posix,self "$put" 2000 | emit put_bw_batch

    for mode in urgent batched; do
        inproc -t smc_lat -s 100 --members 3 -n 2000 -w 50 --mode "$mode" | emit "lat_${mode}"
    done

    inproc -t smc_bw -s 100 --members 3 -n 600000 --mode batched | emit groups_1
    inproc -t smc_bw -s 100 --members 3 -n 600000 --mode batched --groups 65 --active 1 |
        emit groups_64_idle
    inproc -t smc_bw -s 100 --members 3 -n 75000 --mode batched --groups 8 | emit groups_8_active

    for t in 1 2 4; do
        inproc -t smc_bw -s 100 --members 3 -n 100000 --mode batched --threads "$t" |
            emit "threads_$t"
    done

    for mode in urgent batched; do
        smc_shape ucp_smc_bw "$mode" 200000 | emit "perftest_smc_bw_$mode"
        smc_shape ucp_smc_lat "$mode" 20000 | emit "perftest_smc_lat_$mode"
    done
    perftest_json ucp_put_bw posix,self 100 200000 | emit perftest_put_bw_100
done

python3 "$here/smc_targets_summary.py" "$jsonl" "$out" | tee "$out/summary.txt"

gnuplot <<GP
set terminal pngcairo size 900,500 noenhanced
set output "$out/smc_targets_rounds.png"
set title "SMC, 100 B, posix: batched / urgent delivered rate, per round"
set xlabel "round"
set ylabel "batched / urgent"
set key left top
set yrange [0:*]
plot "$out/ratios.dat" using 1:2 with linespoints title "N=3, one process", \
     "" using 1:3 with linespoints title "N=5, one process", \
     "" using 1:4 with linespoints title "N=3, 3 processes", \
     "" using 1:5 with linespoints title "N=5, 5 processes", \
     10 with lines dashtype 2 title "target"
GP
echo "# plot: $out/smc_targets_rounds.png" >&2
