#!/bin/bash
#
# Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
#
# RDMC benchmark: one message from rank 0 to N members.
#
#  1. On the emulated cluster (contrib/cluster/cluster.sh: one network
#     namespace per host, egress limited to RATE by tc tbf, UCX over tcp):
#     for N = 2, 4, 8 and every schedule, the time until the last member
#     has the whole message, and that time over one point-to-point transfer
#     of the same message measured in the same run (interleaved, medians).
#  2. In one process over shared memory (posix): the same shape, N threads.
#
# Writes JSON lines to contrib/bench/results/rdmc/full/rdmc_cluster.jsonl and
# rdmc_shm.jsonl, and (with gnuplot) rdmc_cluster.png.
#
#   contrib/bench/rdmc.sh [--build DIR] [--size 64m] [--block 1m] [--rate 1gbit]
#                         [--members "2 4 8"] [--iters 3] [--no-shm]
set -eu

here="$(cd "$(dirname "$0")" && pwd)"
top="$(cd "$here/../.." && pwd)"
BUILD="$top/build"
SIZE=64m
BLOCK=1m
RATE=1gbit
MEMBERS="2 4 8"
ITERS=3
SHM=1
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --block) BLOCK="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --members) MEMBERS="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --no-shm) SHM=0; shift ;;
    *) echo "rdmc.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
perf="$BUILD/src/tools/twochains-perf"
run="$BUILD/src/tools/twochains-run"
[ -x "$perf" ] || { echo "rdmc.sh: build first ($perf missing)" >&2; exit 2; }

results="$here/results/rdmc/full"
mkdir -p "$results"
cluster_out="$results/rdmc_cluster.jsonl"
shm_out="$results/rdmc_shm.jsonl"
cores=$(nproc)
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# 2 cores here: the ranks sleep while idle instead of spinning
export UCX_TC_WAIT_POLICY=${UCX_TC_WAIT_POLICY:-sleep}

annotate() { # add the run's context to each JSON line
    sed -n 's/^\[0\] //; /^{"shape":"rdmc_bw"/p' |
        sed "s/}\$/,\"setup\":\"$1\",\"link_rate\":\"$2\",\"cores\":$cores,\"date\":\"$stamp\"}/"
}

: > "$cluster_out"
for n in $MEMBERS; do
    echo "== emulated cluster: $n hosts, $RATE egress each, $SIZE in $BLOCK blocks" >&2
    "$top/contrib/cluster/cluster.sh" -n "$n" -r "$RATE" --launcher "$run" --timeout 900 -- \
        "$perf" -t rdmc_bw -s "$SIZE" --block "$BLOCK" --schedule all -n "$ITERS" --json |
        annotate cluster "$RATE" | tee -a "$cluster_out"
done

if [ $SHM -eq 1 ]; then
    : > "$shm_out"
    for n in $MEMBERS; do
        echo "== one process, posix shared memory: $n members" >&2
        UCX_TLS=posix,self "$perf" -t rdmc_bw --inproc --members "$n" -s "$SIZE" \
            --block "$BLOCK" --schedule all -n "$ITERS" --json |
            sed 's/^/[0] /' | annotate inproc-posix none | tee -a "$shm_out"
    done
fi

# summary table and plot
python3 - "$cluster_out" <<'PY' >&2
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("%-10s %3s %10s %8s %9s" % ("schedule", "N", "to all s", "p2p s", "x p2p"))
for r in rows:
    print("%-10s %3d %10.3f %8.3f %9.2f" % (r["schedule"], r["members"], r["time_to_all_s"],
                                            r["p2p_s"], r["ratio_to_p2p"]))
by = {(r["schedule"], r["members"]): r for r in rows}
for n in sorted({r["members"] for r in rows}):
    b, s = by.get(("binomial", n)), by.get(("sequential", n))
    if b and s:
        print("N=%d: binomial %.2fx p2p, %.1fx faster than sequential" %
              (n, b["ratio_to_p2p"], s["time_to_all_s"] / b["time_to_all_s"]))
PY

if command -v gnuplot >/dev/null; then
    dat="$results/rdmc_cluster.dat"
    python3 - "$cluster_out" > "$dat" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ns = sorted({r["members"] for r in rows})
kinds = ["binomial", "sequential", "chain", "tree"]
by = {(r["schedule"], r["members"]): r for r in rows}
print("# N p2p " + " ".join(kinds))
for n in ns:
    p2p = [by[(k, n)]["p2p_s"] for k in kinds if (k, n) in by]
    cols = ["%.4f" % (sum(p2p) / len(p2p))] + \
           ["%.4f" % by[(k, n)]["time_to_all_s"] if (k, n) in by else "?" for k in kinds]
    print(n, " ".join(cols))
PY
    gnuplot <<EOF
set terminal pngcairo size 900,560 noenhanced
set output "$results/rdmc_cluster.png"
set title "RDMC, $SIZE from one root, emulated cluster ($RATE egress per host, UCX tcp)"
set xlabel "members N"
set ylabel "time until every member has the message (s)"
set logscale y
set key top left
set grid
set xtics (2, 4, 8)
plot "$dat" using 1:2 with linespoints lw 2 title "one point-to-point transfer", \
     "$dat" using 1:3 with linespoints lw 2 title "binomial pipeline", \
     "$dat" using 1:4 with linespoints lw 2 title "sequential", \
     "$dat" using 1:5 with linespoints lw 2 title "chain", \
     "$dat" using 1:6 with linespoints lw 2 title "binomial tree"
EOF
    echo "plot: $results/rdmc_cluster.png" >&2
else
    echo "rdmc.sh: no gnuplot (apt-get install gnuplot-nox): no plot" >&2
fi
