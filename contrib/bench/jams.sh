#!/usr/bin/env bash
#
# Replicated jams against raw SMC, interleaved rounds (posix,self, 3
# processes under twochains-run, all senders, the default wait policy); every
# figure is the median of per-round values or ratios, since this host
# changes speed regime within a minute:
#
#   rate   replicated-jam rate (tcbench's server_side_sum, 100 B of payload)
#          over the raw SMC rate of 100 B messages, same round: Local,
#          Injected (code in every frame) and Cached (code once, then its
#          hash); urgent and batched SMC; goal >= 0.8. Raw twice: delivery
#          that only counts, and delivery that reads every message (--touch:
#          the sum server_side_sum computes), so the data's first touch is
#          on both sides
#   lat    one jam at a time: send to executed at every member (send_jam,
#          then flush(stable), at the sender), Local / Injected / Cached,
#          beside the raw message's send to delivered at every member
#   base   ucx_perftest ucp_put_bw at 100 B, pinned pair, same round
#
# Slots hold each mode's frames (twochains-perf --jam): Local 144 B, Injected
# the code too (448 B), Cached the hash-only frame (152 B), its first frames
# with the code over RDMC.
#
# One JSON object per point (with "point" and "round") in
# contrib/bench/results/jams/jams.jsonl, the summary in summary.txt, the
# per-round ratios in ratios.dat and a plot (jams_rounds.png).
#
#   contrib/bench/jams.sh [ROUNDS (default 7)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TC_BUILD:-$here/../../build}
bin=$build/src/tools
pkgs=$build/test/twochains-pkgs
out=$here/results/jams
rounds=${1:-7}
source "$here/perftest_lib.sh"

export UCX_TLS=posix,self
mkdir -p "$out"
jsonl=$out/jams.jsonl
: > "$jsonl"
echo "# $(nproc) cores, UCX_TC_WAIT_POLICY=${UCX_TC_WAIT_POLICY:-adaptive (default)}, $rounds rounds" >&2

r=0
procs() {  # procs ARGS: rank 0's JSON line, 3 processes
    "$bin/twochains-run" -n 3 --timeout 180 -- "$bin/twochains-perf" --json --pkgs "$pkgs" "$@" |
        sed -n 's/^\[0\] //p'
}

for ((r = 1; r <= rounds; ++r)); do
    echo "# round $r of $rounds" >&2
    for mode in urgent batched; do
        procs -t smc_bw -s 100 -n 200000 --mode "$mode" | emit "raw_$mode"
        procs -t smc_bw -s 100 -n 200000 --mode "$mode" --touch | emit "touch_$mode"
        for jam in local injected cached; do
            procs -t smc_bw -s 100 -n 200000 --mode "$mode" --jam "$jam" | emit "${jam}_$mode"
        done
    done
    procs -t smc_lat -s 100 -n 3000 | emit raw_lat
    for jam in local injected cached; do
        procs -t smc_lat -s 100 -n 3000 --jam "$jam" | emit "${jam}_lat"
    done
    perftest_json ucp_put_bw posix,self 100 1000000 | emit put_bw
done

python3 "$here/jams_summary.py" "$jsonl" "$out" | tee "$out/summary.txt"
if command -v gnuplot >/dev/null; then
    gnuplot <<GP
set terminal pngcairo size 900,480 noenhanced
set output "$out/jams_rounds.png"
set title "Replicated jams / raw SMC, 100 B, 3 processes, posix (per round)"
set xlabel "round"; set ylabel "jam rate / raw SMC rate"; set yrange [0:1.4]; set grid
set key outside right
plot for [c=2:7] "$out/ratios.dat" using 1:c with linespoints title columnhead(c), \
     0.8 with lines dashtype 2 lc rgb "black" title "goal 0.8"
GP
fi
