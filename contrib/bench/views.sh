#!/usr/bin/env bash
#
# View changes under failures: detection latency (kill -> first suspicion),
# time from the wedge to the new view, and messages trimmed, for
#   kill9 N=3 and N=5 (posix, all members sending), SIGSTOP N=3, the leader
#   killed during the cleanup of another failure (N=5; times to the last
#   view), a relay killed during a 32 MiB RDMC multicast (N=4);
# and for joins (N=3, 5): the joiner's wait, wedge to view, messages trimmed.
# Uses test/helpers/group_fault_probe (built by make check) with the TCP bootstrap
# env set by hand, and UCX's own diag-level log timestamps.
#
#   contrib/bench/views.sh [REPS]     (one JSON object per run on stdout)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TC_BUILD:-$here/../../build}
probe=$build/test/helpers/group_fault_probe
reps=${1:-5}
[ -x "$probe" ] || { echo "build the tests first (make -C build check)" >&2; exit 2; }
export UCX_TLS=posix,self UCX_TC_WAIT_POLICY=sleep UCX_TC_SUSPECT_TIMEOUT=${UCX_TC_SUSPECT_TIMEOUT:-200ms} \
       UCX_TC_HEARTBEAT_INTERVAL=10ms UCX_TC_BOOTSTRAP_TIMEOUT=5s UCX_LOG_LEVEL=diag
work=$(mktemp -d /tmp/tc-views.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

# shellcheck source=contrib/bench/perftest_lib.sh
source "$here/perftest_lib.sh"   # free_port

# wait_ready FILE...: every file says "ready" within 30 s (else 1)
wait_ready() {
    local f t
    for f in "$@"; do
        for ((t = 0; t < 3000; ++t)); do
            grep -q ready "$f" 2>/dev/null && continue 2
            sleep 0.01
        done
        return 1
    done
}

# start_members SCENARIO N PROBE_ARGS...: N members with the TCP bootstrap,
# pids in $pids, outputs in $work/out.R; 1 (and a JSON error line) if they
# do not all come up
start_members() {
    local scenario=$1 n=$2 port r
    shift 2
    port=$(free_port) pids=()
    for ((r = 0; r < n; ++r)); do
        UCX_TC_SIZE=$n UCX_TC_RANK=$r UCX_TC_ROOT=127.0.0.1:$port \
            "$probe" "$@" > "$work/out.$r" 2>&1 &
        pids+=($!)
    done
    wait_ready $(for ((r = 0; r < n; ++r)); do echo "$work/out.$r"; done) && return 0
    kill -9 "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null
    echo "{\"scenario\": \"$scenario\", \"members\": $n, \"error\": \"start-up failed\"}"
    return 1
}

# run SCENARIO N VICTIM SIGNAL [SECOND_VICTIM]: with a second victim (the
# leader), it is killed as soon as it logs that it wedged (leader killed
# during cleanup); PROBE_ARGS and KILL_AFTER (a line rank 0 prints first)
# shape the run.
run() {
    local scenario=$1 n=$2 victim=$3 sig=$4 second=${5:-} r t_kill
    # shellcheck disable=SC2086
    start_members "$scenario" "$n" ${PROBE_ARGS:--c 4000 -r 5000} || return 0
    if [ -n "${KILL_AFTER:-}" ]; then
        until grep -q "$KILL_AFTER" "$work/out.0" 2>/dev/null; do sleep 0.001; done
    else
        sleep 0.2
    fi
    t_kill=$(date +%s.%N)
    kill -"$sig" "${pids[$victim]}"
    [ "$sig" = STOP ] && { sleep 1.5; kill -CONT "${pids[$victim]}"; }
    if [ -n "$second" ]; then
        until grep -q "wedged" "$work/out.$second" 2>/dev/null; do sleep 0.001; done
        kill -KILL "${pids[$second]}"
    fi
    wait "${pids[@]}" 2>/dev/null || true
    local s=0   # a survivor's log
    while [ "$s" = "$victim" ] || [ "$s" = "$second" ]; do s=$((s + 1)); done
    python3 - "$scenario" "$n" "$t_kill" "$work/out.$s" <<'PY'
import json, re, sys
scenario, n, t_kill, log = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), open(sys.argv[4]).read()
ts = lambda pat: next((float(m.group(1)) for m in re.finditer(r"\[(\d+\.\d+)\][^\n]*" + pat, log)), None)
suspect, wedged = ts("suspecting rank"), ts("wedged")
inst = [float(m.group(1)) for m in re.finditer(r"\[(\d+\.\d+)\][^\n]*installed epoch", log)]
installed = inst[-1] if inst else None   # the last view: after every failure
res = re.search(r"result chain \w+ count (\d+) views (\d+) trimmed (\d+)", log)
print(json.dumps({"scenario": scenario, "members": n,
    "detection_ms": round((suspect - t_kill) * 1e3, 1) if suspect else None,
    "wedge_to_view_ms": round((installed - wedged) * 1e3, 3) if installed and wedged else None,
    "kill_to_view_ms": round((installed - t_kill) * 1e3, 1) if installed else None,
    "delivered": int(res.group(1)) if res else None, "views": int(res.group(2)) if res else None,
    "trimmed": int(res.group(3)) if res else None}))
PY
}

# join: N members with join ports; a new process joins through rank 1.
# join_ms: joiner start -> its first view; wedge_to_view_ms at a member (the
# request's wedge -> the view with the joiner started); trimmed at a member.
join_run() { # n
    local n=$1 base r t_join jpid
    base=$(( (RANDOM % 8000) + 10000 ))   # join ports: base + rank
    start_members join "$n" -c 6000 -r 5000 -J "$base" || return 0
    sleep 0.2
    t_join=$(date +%s.%N)
    "$probe" -c 1000 -r 5000 -j "127.0.0.1:$((base + 1))" > "$work/out.j" 2>&1 &
    jpid=$!
    until grep -q ready "$work/out.j" 2>/dev/null; do
        kill -0 "$jpid" 2>/dev/null || break
        sleep 0.001
    done
    local t_ready; t_ready=$(date +%s.%N)
    wait "${pids[@]}" "$jpid" 2>/dev/null || true
    python3 - "$n" "$t_join" "$t_ready" "$work/out.0" "$work/out.j" <<'PY'
import json, re, sys
n, t_join, t_ready, log, jlog = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), open(sys.argv[4]).read(), open(sys.argv[5]).read()
inst = re.search(r"installed epoch \d+ with \d+ members \(with a joiner\), ([0-9.]+) ms after the wedge", log)
trim = re.search(r"admitting joiner \d+, [0-9.]+ ms after the wedge \(([0-9.]+) ms to the trim\)", log)
res = re.search(r"result chain (\w+) count (\d+) views (\d+) trimmed (\d+)", log)
jres = re.search(r"result chain (\w+) count (\d+)", jlog)
print(json.dumps({"scenario": "join", "members": n,
    "join_ms": round((t_ready - t_join) * 1e3, 1),
    "wedge_to_view_ms": float(inst.group(1)) if inst else None,
    "wedge_to_trim_ms": float(trim.group(1)) if trim else None,
    "trimmed": int(res.group(4)) if res else None,
    "same_chain_at_joiner": bool(res and jres and res.group(1) == jres.group(1))}))
PY
}

for ((i = 0; i < reps; ++i)); do
    run kill9 3 $((i % 3)) KILL
    run kill9 5 $((i % 5)) KILL
    run sigstop 3 2 STOP
    run leader_killed_in_cleanup 5 3 KILL 0
    PROBE_ARGS="-c 2000 -r 4000 -L 33554432" KILL_AFTER="large send" run rdmc_32mib_relay_killed 4 2 KILL
    join_run 3
    join_run 5
done
