#!/usr/bin/env bash
#
# A mailbox sized for N ranks in which two real processes talk
# (test/helpers/mailbox_scale: ranks 0 and N-1 of a job whose other ranks
# are phantoms that published what rank 0 did and never send), for
# N = 2, 64, 1024, 4096, 16384, interleaved: each round runs every N once,
# in order. Per point: one-way latency of a Local frame ping-pong (8 B
# payload), the time of an empty poll once the idle ring slept, the bytes
# the mailbox registered, VmRSS, and the mailbox's creation time.
#
#   contrib/bench/mailbox_scale.sh [--rounds R] [--tls posix|tcp]
#   contrib/bench/mailbox_scale.sh --summary results/mailbox_scale/posix.jsonl
#
# One JSON object per point and rank on stdout ("round":r), then per N the
# median over rounds of the per-round ratio to N = 2 of the same round.
# Results: contrib/bench/results/mailbox_scale/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TC_BUILD:-$here/../../build}
source "$here/perftest_lib.sh"   # results_*
rounds=7 tls=posix summary_only=
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --tls) tls=$2; shift ;;
        --summary) summary_only=$2; shift ;;
        *) echo "usage: $0 [--rounds R] [--tls posix|tcp] | --summary JSONL" >&2; exit 2 ;;
    esac
    shift
done

summarize() {   # JSONL
python3 - "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows = [r for r in rows if r["rank"] == 0]
by = {(r["round"], r["job"]): r for r in rows}
jobs = sorted({r["job"] for r in rows})
print("# rank 0; per-round ratio to N = 2 of the same round, median over rounds")
print(f"{'N':>6} {'lat p50 us':>10} {'ratio':>6} {'empty poll ns':>13} {'ratio':>6} "
      f"{'registered B':>12} {'RSS KiB':>8} {'create ms':>9}")
for n in jobs:
    pts = [by[(rd, n)] for rd in sorted({k[0] for k in by}) if (rd, n) in by]
    lr = [by[(rd, n)]["lat_p50_us"] / by[(rd, 2)]["lat_p50_us"]
          for rd in sorted({k[0] for k in by}) if (rd, n) in by and (rd, 2) in by]
    er = [by[(rd, n)]["empty_poll_ns"] / by[(rd, 2)]["empty_poll_ns"]
          for rd in sorted({k[0] for k in by}) if (rd, n) in by and (rd, 2) in by]
    med = lambda k: statistics.median(p[k] for p in pts)
    print(f"{n:>6} {med('lat_p50_us'):>10.3f} {statistics.median(lr):>6.3f} "
          f"{med('empty_poll_ns'):>13.2f} {statistics.median(er):>6.3f} "
          f"{med('registered_bytes'):>12.0f} {med('rss_kb'):>8.0f} {med('create_ms'):>9.2f}")
PY
}
results_summary_only "$summary_only"
results_open "$here/results/mailbox_scale" "$tls.jsonl"
echo "# cores: $(nproc), wait policy: ${UCX_TC_WAIT_POLICY:-adaptive (default)}, $tls, $rounds rounds" >&2
for r in $(seq "$rounds"); do
    for n in 2 64 1024 4096 16384; do
        UCX_TLS=$tls,self "$build/src/tools/twochains-run" -n 2 --timeout 120 -- \
            "$build/test/helpers/mailbox_scale" --job "$n" --iters 5000 --polls 1000000 --json |
            sed -n 's/^\[[01]\] \({.*}\)$/\1/p' | sed "s/}\$/,\"round\":$r}/" | tee -a "$out"
    done
done
results_close
