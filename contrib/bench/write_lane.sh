#!/usr/bin/env bash
#
# The write lane over tcp: the active-message lane (the default where UCP
# emulates puts) against UCP's emulated put (UCX_TC_WRITE_LANE=rma), in one
# run, interleaved: each round runs every shape with am, then with rma.
#
#   smc_bw (all senders) and smc_lat at N = 2, 3, 5, 100 B (twochains-perf
#   under twochains-run); the put ring's hop latency at N = 3, 256 B; Local
#   ucp_ifunc_lat over tcp (ucx_perftest with our shapes), 4 B; and, as the
#   same-run reference, ucp_am_lat over tcp.
#
#   contrib/bench/write_lane.sh [--rounds R] [--quick]
#   contrib/bench/write_lane.sh --summary results/write_lane/full/write_lane.jsonl
#
# One JSON object per point on stdout ("lane":"am"|"rma","round":r), then
# per shape the median over rounds of the per-round ratio (rma / am for a
# latency, am / rma for a rate). Results: contrib/bench/results/write_lane/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TC_BUILD:-$here/../../build}
bin=$build/src/tools
source "$here/perftest_lib.sh"

rounds=7 iters=20000 lat_iters=2000 kind=full summary_only=
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --quick) rounds=3 iters=4000 lat_iters=500 kind=quick ;;
        --summary) summary_only=$2; shift ;;
        *) echo "usage: $0 [--rounds R] [--quick] | --summary JSONL" >&2; exit 2 ;;
    esac
    shift
done

summarize() {   # JSONL
python3 - "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def key(p):
    return (p["shape"], p.get("members", 0))
by = {}
for p in rows:
    by.setdefault((key(p), p["round"], p["lane"]), p)
shapes = sorted({key(p) for p in rows if p["lane"] in ("am", "rma")})
print("# per-round ratio, median over rounds (> 1: the active-message lane is faster)")
for s in shapes:
    ratios, am_vals, rma_vals = [], [], []
    for r in sorted({k[1] for k in by}):
        a, b = by.get((s, r, "am")), by.get((s, r, "rma"))
        if not a or not b:
            continue
        if s[0] == "smc_bw":
            va, vb = a["msg_rate"], b["msg_rate"]
            ratios.append(va / vb if vb else 0)
        else:
            f = "hop_lat_p50_us" if s[0] == "put_ring" else "lat_avg_us"
            va, vb = a[f], b[f]
            ratios.append(vb / va if va else 0)
        am_vals.append(va); rma_vals.append(vb)
    if not ratios:
        continue
    unit = "msg/s" if s[0] == "smc_bw" else "us"
    name = f"{s[0]} N={s[1]}" if s[1] else s[0]
    print(f"{name:14s} am {statistics.median(am_vals):12.2f} {unit}  rma {statistics.median(rma_vals):12.2f} {unit}"
          f"  am faster by {statistics.median(ratios):.2f}x")
ref = {r: p for (k, r, lane), p in by.items() if k[0] == "ucp_am_lat"}
ifa = {r: p for (k, r, lane), p in by.items() if k[0] == "ucp_ifunc_lat" and lane == "am"}
both = [r for r in ref if r in ifa]
if both:
    p50 = statistics.median(ifa[r]["lat_p50_us"] / ref[r]["lat_p50_us"] for r in both)
    avg = statistics.median(ifa[r]["lat_avg_us"] / ref[r]["lat_avg_us"] for r in both)
    print(f"Local ucp_ifunc_lat (am lane) / ucp_am_lat over tcp, median of per-round ratios: "
          f"p50 {p50:.3f}, avg {avg:.3f}; ucp_am_lat p50 "
          f"{statistics.median(ref[r]['lat_p50_us'] for r in both):.2f} us")
PY
}
results_summary_only "$summary_only"
perftest=$build/contrib/ucx_perftest/ucx_perftest
pkgs=$build/test/twochains-pkgs
results_open "$here/results/write_lane/$kind" write_lane.jsonl
tls=tcp,self
echo "# cores: $(nproc), wait policy: ${UCX_TC_WAIT_POLICY:-adaptive (default)}, $tls, $rounds rounds" >&2

tag() { sed "s/}\$/,\"lane\":\"$1\",\"round\":$2}/"; }

group_point() {   # lane round shape n
    local lane=$1 r=$2 shape=$3 n=$4 extra=()
    [ "$shape" = smc_bw ] && extra=(-n "$iters" -w 500 --senders all) || extra=(-n "$lat_iters" -w 50)
    UCX_TC_WRITE_LANE=$lane UCX_TLS=$tls "$bin/twochains-run" -n "$n" --timeout 300 -- \
        "$bin/twochains-perf" -t "$shape" -s 100 "${extra[@]}" --json |
        sed -n 's/^\[0\] //p' | tag "$lane" "$r"
}

ring_point() {    # lane round
    UCX_TC_WRITE_LANE=$1 UCX_TLS=$tls "$bin/twochains-run" -n 3 --timeout 300 -- \
        "$bin/twochains-ring" -s 256 -n 2000 -w 100 --json |
        sed -n 's/^\[0\] //p' | grep '^{' | tag "$1" "$2"
}

ifunc_point() {   # lane round
    local lane=$1 r=$2 port final
    port=$(free_port)
    UCX_TC_WRITE_LANE=$lane UCX_TLS=$tls UCX_TC_IFUNC_PKG_PATH=$pkgs taskset -c 0 \
        "$perftest" -p "$port" >/dev/null 2>&1 &
    local server=$!
    sleep 0.5
    final=$(UCX_TC_WRITE_LANE=$lane UCX_TLS=$tls UCX_TC_IFUNC_PKG_PATH=$pkgs taskset -c 1 \
            timeout 120 "$perftest" localhost -p "$port" -t ucp_ifunc_lat -s 4 -n 20000 \
            2>/dev/null | sed -n 's/^Final: *//p')
    wait "$server" 2>/dev/null || true
    set -- $final
    printf '{"shape":"ucp_ifunc_lat","jam":"Local","transport":"%s","payload_bytes":4,"lat_p50_us":%s,"lat_avg_us":%s}\n' \
        "$tls" "${2:-0}" "${3:-0}" | tag "$lane" "$r"
}

for r in $(seq 1 "$rounds"); do
    echo "== round $r of $rounds" >&2
    perftest_json ucp_am_lat "$tls" 4 20000 | tag ref "$r" | tee -a "$out"
    for lane in am rma; do
        for n in 2 3 5; do
            group_point "$lane" "$r" smc_bw "$n" | tee -a "$out"
            group_point "$lane" "$r" smc_lat "$n" | tee -a "$out"
        done
        ring_point "$lane" "$r" | tee -a "$out"
        [ -x "$perftest" ] && ifunc_point "$lane" "$r" | tee -a "$out"
    done
done

results_close summary.txt >&2
