#!/usr/bin/env bash
#
# A group's speed against its member count: N = 2, 4, 8, ..., MAX real
# processes (test/helpers/group_fault_probe, one member each), every member
# sending COUNT messages of 1-64 bytes as fast as the group takes them, in
# urgent and in batched SMC. Interleaved: each round runs every N and mode
# once. Per point: the slowest member's stream time (first send until
# close() returned, every message of every member delivered there) and the
# delivered rate per member, N * COUNT / that time.
#
# This machine has 2 cores: past N = 2 the members share them, so the
# points past 16 measure this host's scheduler as much as the group. The
# failure detector is paced to that (heartbeat 200 ms, suspicion 60 s);
# everything else is the default.
#
#   contrib/bench/group_members.sh [--rounds R] [--max N] [--count C] [--tls posix|tcp]
#   contrib/bench/group_members.sh --summary results/group_members/posix.jsonl
#
# One JSON object per point on stdout and in results/group_members/TLS.jsonl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TC_BUILD:-$here/../../build}
source "$here/perftest_lib.sh"   # results_*
rounds=3 max=256 count=500 tls=posix summary_only=
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --max) max=$2; shift ;;
        --count) count=$2; shift ;;
        --tls) tls=$2; shift ;;
        --summary) summary_only=$2; shift ;;
        *) echo "usage: $0 [--rounds R] [--max N] [--count C] [--tls posix|tcp] | --summary JSONL" >&2
           exit 2 ;;
    esac
    shift
done

summarize() {   # JSONL
python3 - "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("# median over rounds; failed points are counted, not averaged")
print(f"{'N':>5} {'mode':>8} {'stream s':>9} {'msg/s per member':>17} {'ok/runs':>8}")
for mode in ("urgent", "batched"):
    for n in sorted({r["members"] for r in rows}):
        pts = [r for r in rows if r["members"] == n and r["mode"] == mode]
        ok = [r for r in pts if r["ok"]]
        if not pts:
            continue
        if not ok:
            print(f"{n:>5} {mode:>8} {'-':>9} {'-':>17} {0:>4}/{len(pts)}")
            continue
        print(f"{n:>5} {mode:>8} {statistics.median(r['stream_s'] for r in ok):>9.3f} "
              f"{statistics.median(r['rate_per_member'] for r in ok):>17.0f} "
              f"{len(ok):>4}/{len(pts)}")
PY
}
results_summary_only "$summary_only"
results_open "$here/results/group_members" "$tls.jsonl"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sizes=()
for ((n = 2; n <= max; n *= 2)); do sizes+=("$n"); done
for round in $(seq "$rounds"); do
    for n in "${sizes[@]}"; do
        for mode in urgent batched; do
            flag=; [ "$mode" = batched ] && flag=-b
            log=$work/run.log
            rc=0
            UCX_TLS=$tls,self UCX_TC_HEARTBEAT_INTERVAL=200ms UCX_TC_SUSPECT_TIMEOUT=60s \
                UCX_TC_BOOTSTRAP_TIMEOUT=120s \
                "$build/src/tools/twochains-run" -n "$n" --timeout 600 -- \
                "$build/test/helpers/group_fault_probe" $flag -c "$count" -r 1000000 -s 64 \
                >"$log" 2>&1 || rc=$?
            python3 - "$log" "$n" "$mode" "$round" "$count" "$tls" "$rc" <<'PY' | tee -a "$out"
import json, re, sys
log, n, mode, rnd, count, tls, rc = sys.argv[1:]
n, count = int(n), int(count)
text = open(log, errors="replace").read()
streams = [float(x) for x in re.findall(r"stream ([0-9.]+) s", text)]
results = re.findall(r"result chain ([0-9a-f]+) count (\d+) .* status (\S+) sum (\d+)", text)
ok = (rc == "0" and len(streams) == n and len(results) == n and
      len({r[0] for r in results}) == 1 and all(int(r[1]) == n * count for r in results) and
      all(r[2] == "Success" for r in results))
point = {"bench": "group_members", "tls": tls, "members": n, "mode": mode, "round": int(rnd),
         "count": count, "ok": ok, "exit": int(rc)}
if ok:
    s = max(streams)
    point.update(stream_s=round(s, 4), rate_per_member=round(n * count / s, 1))
print(json.dumps(point))
PY
        done
    done
done
results_close "$tls.txt"
