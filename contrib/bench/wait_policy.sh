#!/usr/bin/env bash
#
# The wait policies where they matter: the oversubscribed group shapes (3
# members on this machine's cores, in one process and in three) and a
# pinned pair (ucp_ifunc_lat Local, 4 B, server and client on cores 0 and 1),
# for every policy, interleaved round by round. One JSON object per point
# (msg_rate or lat_p50_us, and cpu_s where the shape reports it), then the
# median of each shape per policy and its ratio to the best policy.
#
#   contrib/bench/wait_policy.sh [ROUNDS]     (default 7)
#
# Results: contrib/bench/results/wait_policy/full/wait_policy.jsonl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TC_BUILD:-$here/../../build}
bin=$build/src/tools
perftest=${TC_PERFTEST:-$build/contrib/ucx_perftest/ucx_perftest}
rounds=${1:-7}
out=$here/results/wait_policy/full
mkdir -p "$out"
jsonl=$out/wait_policy.jsonl
: > "$jsonl"
source "$here/perftest_lib.sh"   # free_port, json_field
policies="adaptive sleep pause busy"
export UCX_TLS=posix,self

# spinning policies collapse here: fewer messages for them, the rate is a rate
iters() { case $1 in pause|busy) echo 20000 ;; *) echo 200000 ;; esac; }

point() {   # round policy shape JSON
    local r=$1 pol=$2 shape=$3 j=$4
    printf '{"round":%s,"policy":"%s","case":"%s",%s\n' "$r" "$pol" "$shape" "${j#\{}" | tee -a "$jsonl"
}

for ((r = 1; r <= rounds; ++r)); do
    for pol in $policies; do
        n=$(iters "$pol")
        j=$(UCX_TC_WAIT_POLICY=$pol timeout 300 "$bin/twochains-perf" --inproc --members 3 \
            -t smc_bw -s 100 -n "$n" --json)
        point "$r" "$pol" inproc3_urgent "$j"
        j=$(UCX_TC_WAIT_POLICY=$pol timeout 300 "$bin/twochains-perf" --inproc --members 3 \
            -t smc_bw --mode batched -s 100 -n "$n" --json)
        point "$r" "$pol" inproc3_batched "$j"
        j=$(UCX_TC_WAIT_POLICY=$pol timeout 300 "$bin/twochains-run" -n 3 --timeout 300 -- \
            "$bin/twochains-perf" -t smc_bw --mode batched -s 100 -n "$n" --json |
            sed -n 's/^\[0\] //p')
        point "$r" "$pol" procs3_batched "$j"
        if [ -x "$perftest" ]; then
            port=$(free_port)
            env UCX_TC_WAIT_POLICY=$pol UCX_TC_IFUNC_MODE=local \
                UCX_TC_IFUNC_PKG_PATH="$build/test/twochains-pkgs" \
                taskset -c 0 "$perftest" -p "$port" >/dev/null 2>&1 &
            server=$!
            sleep 0.5
            final=$(env UCX_TC_WAIT_POLICY=$pol UCX_TC_IFUNC_MODE=local \
                    UCX_TC_IFUNC_PKG_PATH="$build/test/twochains-pkgs" taskset -c 1 timeout 120 \
                    "$perftest" localhost -p "$port" -t ucp_ifunc_lat -s 4 -n 50000 2>/dev/null |
                    sed -n 's/^Final: *//p') || true
            wait "$server" 2>/dev/null || true
            if [ -n "$final" ]; then
                set -- $final
                point "$r" "$pol" pinned_ifunc_lat "{\"lat_p50_us\":$2,\"lat_avg_us\":$3}"
            fi
        fi
    done
done

python3 - "$jsonl" <<'PY'
import json, sys, statistics as st, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
by = collections.defaultdict(list)
rnd = {}
for r in rows:
    v = r.get('lat_p50_us') if r['case'] == 'pinned_ifunc_lat' else r.get('msg_rate')
    if v:
        by[(r['case'], r['policy'])].append((v, r.get('cpu_s')))
        rnd[(r['case'], r['policy'], r.get('round'))] = v
for shape in ('inproc3_urgent', 'inproc3_batched', 'procs3_batched', 'pinned_ifunc_lat'):
    med = {p: st.median(v for v, _ in by[(shape, p)]) for (s, p) in by if s == shape}
    if not med:
        continue
    lat = shape == 'pinned_ifunc_lat'
    best = min(med.values()) if lat else max(med.values())
    best_p = next(p for p, m in med.items() if m == best)
    rounds = sorted({k[2] for k in rnd if k[0] == shape})
    for p, m in sorted(med.items(), key=lambda kv: kv[1], reverse=not lat):
        ratio = (m / best) if lat else (best / m)
        # the same, as the median of each round's ratio to the best policy
        per = [(rnd[(shape, p, i)] / rnd[(shape, best_p, i)]) if lat else
               (rnd[(shape, best_p, i)] / rnd[(shape, p, i)])
               for i in rounds if (shape, p, i) in rnd and (shape, best_p, i) in rnd]
        per_s = f" (per round x{st.median(per):.2f})" if per else ""
        cpu = [c for _, c in by[(shape, p)] if c is not None]
        cpu_s = f", cpu {st.median(cpu):.2f} s" if cpu else ""
        unit = "us p50" if lat else "msg/s"
        print(f"# {shape:17s} {p:9s} median {m:12.4g} {unit}  x{ratio:5.2f} of the best{per_s}{cpu_s}")
PY
