#!/usr/bin/env bash
#
# SMC urgent vs batched, 100-byte messages, all members in one process
# (twochains-perf --inproc, one thread per member, posix,self), in one run:
#   - saturation: N = 2, 3, 5; one sender and all senders; urgent and batched
#     with B in {1, 16, 64, 250} and T in {0, 20, 100} us; each point the
#     median of REPS runs interleaved A B A B so that machine drift hits all;
#   - latency at low load (one message at a time) and against offered load;
#   - the transport's limit: ucp_put_bw of a 25 KB put (pinned), / (N-1).
# One JSON object per point in contrib/bench/results/smc_batch/{full,quick}/
# smc_batch.jsonl, plots beside it, ratios on stdout.
#
#   contrib/bench/smc_batch.sh [--quick]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TC_BUILD:-$here/../../build}/src/tools
out=$here/results/smc_batch/full
source "$here/perftest_lib.sh"

reps=3 iters=50000 lat_iters=2000
batches="1 16 64 250" flushes="0 20 100" members="2 3 5" rates="2000 20000 100000 400000"
if [ "${1:-}" = "--quick" ]; then
    reps=1 iters=10000 lat_iters=300 batches="1 64" flushes="0 20" members="3" rates="20000 200000"
    out=$here/results/smc_batch/quick
fi
export UCX_TLS=posix,self   # and the default wait policy, unless UCX_TC_WAIT_POLICY is set
mkdir -p "$out"
jsonl=$out/smc_batch.jsonl
: > "$jsonl"
echo "# $(nproc) cores, UCX_TC_WAIT_POLICY=${UCX_TC_WAIT_POLICY:-adaptive (default)}, --inproc, posix,self, median of $reps" >&2

perf() { "$bin/twochains-perf" --inproc -s 100 --json "$@"; }
# median of the msg_rate field over REPS runs of the same point; prints that run's JSON
median_run() {
    local runs=() i
    for ((i = 0; i < reps; ++i)); do runs+=("$(perf "$@")"); done
    printf '%s\n' "${runs[@]}" | awk -F'"msg_rate":' '{split($2, a, ","); print a[1] "\t" $0}' |
        sort -g | awk -v m=$(( (reps + 1) / 2 )) 'NR == m { sub(/^[^\t]*\t/, ""); print }'
}

big=$(perftest_json ucp_put_bw posix,self 25000 20000)
echo "$big" | tee -a "$jsonl"

for n in $members; do
    for senders in one all; do
        # the urgent baseline is re-measured between batched points (A B A B)
        for b in $batches; do
            for t in $flushes; do
                w=$(( b > 64 ? 4 * b : 256 ))
                median_run -t smc_bw --members "$n" --senders "$senders" -n "$iters" \
                    --window 256 | tee -a "$jsonl"
                median_run -t smc_bw --members "$n" --senders "$senders" -n "$iters" \
                    --window "$w" --mode batched --batch "$b" --flush-us "$t" | tee -a "$jsonl"
            done
        done
    done
done

# latency: one message at a time, and against offered load (N = 3, one sender)
for t in 0 20 100; do
    perf -t smc_lat --members 3 -n "$lat_iters" -w 50 --window 256 | tee -a "$jsonl"
    perf -t smc_lat --members 3 -n "$lat_iters" -w 50 --window 256 --mode batched \
         --batch 64 --flush-us "$t" | tee -a "$jsonl"
done
for r in $rates; do
    n_r=$(( r / 20 > lat_iters ? lat_iters * 5 : lat_iters ))
    perf -t smc_lat --members 3 -n "$n_r" -w 50 --window 1024 --rate "$r" | tee -a "$jsonl"
    perf -t smc_lat --members 3 -n "$n_r" -w 50 --window 1024 --rate "$r" --mode batched \
         --batch 64 --flush-us 20 | tee -a "$jsonl"
done

python3 - "$jsonl" "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
big = next(r for r in rows if r['shape'] == 'ucp_put_bw')
bw = [r for r in rows if r['shape'] == 'smc_bw']
def med(xs): return statistics.median(xs) if xs else float('nan')
print("# summary (100 B, in-process, posix,self)")
for n in sorted({r['members'] for r in bw}):
    for s in sorted({r['senders'] for r in bw if r['members'] == n}):
        pts = [r for r in bw if r['members'] == n and r['senders'] == s]
        urg = med([r['msg_rate'] for r in pts if r['mode'] == 'urgent'])
        bat = [r for r in pts if r['mode'] == 'batched']
        best = max(bat, key=lambda r: r['msg_rate'])
        limit = big['MB/s'] * 1e6 / 100 / max(1, n - 1)
        formula = (n * n + n - 2) / max(best['batch_avg'], 1e-9)
        print(f"# N={n} senders={s}: urgent {urg:,.0f} msg/s; best batched {best['msg_rate']:,.0f} "
              f"(B={best['batch']}, T={best['flush_us']:.0f}) = {best['msg_rate']/urg:.1f}x urgent; "
              f"{best['puts_per_msg']:.3f} puts/msg vs 1.2x(N^2+N-2)/B_eff = {1.2*formula:.3f}; "
              f"{best['msg_rate']/limit*100:.1f}% of the 25 KB put limit {limit:,.0f} msg/s")
lat = [r for r in rows if r['shape'] == 'smc_lat' and r['offered_rate'] == 0]
for r in lat:
    print(f"# smc_lat N=3 low load {r['mode']} T={r['flush_us']:.0f}: avg {r['lat_avg_us']:.1f} us, "
          f"p50 {r['lat_p50_us']:.1f}, p99.9 {r['lat_p999_us']:.1f}")
# data for the plots
with open(sys.argv[2] + '/smc_batch_rate.dat', 'w') as f:
    for r in sorted([r for r in bw if r['mode'] == 'batched' and r['members'] == 3], key=lambda r: (r['senders'], r['flush_us'], r['batch'])):
        f.write(f"{r['senders']} {r['flush_us']:.0f} {r['batch']} {r['msg_rate']}\n")
    f.write("\n\n")
    for r in [r for r in bw if r['mode'] == 'urgent' and r['members'] == 3]:
        f.write(f"{r['senders']} -1 0 {r['msg_rate']}\n")
with open(sys.argv[2] + '/smc_batch_load.dat', 'w') as f:
    for mode in ('urgent', 'batched'):
        for r in sorted([r for r in rows if r['shape'] == 'smc_lat' and r['offered_rate'] > 0 and r['mode'] == mode], key=lambda r: r['offered_rate']):
            f.write(f"{r['offered_rate']} {r['lat_p50_us']} {r['lat_p999_us']}\n")
        f.write("\n\n")
PY

gnuplot <<GP
set terminal pngcairo size 900,500 noenhanced
set output "$out/smc_batch_rate.png"
set title "SMC, N = 3, 100 B, in-process posix: delivered msg/s vs batch size B"
set logscale xy
set xlabel "B (messages per batch)"
set ylabel "delivered messages/s"
set key left top
plot "$out/smc_batch_rate.dat" index 0 using (\$1==3 && \$2==0 ? \$3 : 1/0):4 with linespoints title "batched, all senders, T=0", \
     "" index 0 using (\$1==3 && \$2==20 ? \$3 : 1/0):4 with linespoints title "batched, all senders, T=20us", \
     "" index 0 using (\$1==1 && \$2==20 ? \$3 : 1/0):4 with linespoints title "batched, one sender, T=20us", \
     "" index 1 using (\$1==3 ? 1 : 1/0):4 with points pt 7 title "urgent, all senders (re-measured per point)"
set output "$out/smc_batch_latency.png"
set title "SMC, N = 3, one sender, 100 B: latency to delivery at all members vs offered load"
set xlabel "offered load (messages/s)"
set ylabel "latency (us)"
plot "$out/smc_batch_load.dat" index 0 using 1:2 with linespoints title "urgent p50", \
     "" index 0 using 1:3 with linespoints title "urgent p99.9", \
     "" index 1 using 1:2 with linespoints title "batched B=64 T=20us p50", \
     "" index 1 using 1:3 with linespoints title "batched B=64 T=20us p99.9"
GP
echo "# plots: $out/smc_batch_rate.png $out/smc_batch_latency.png" >&2
