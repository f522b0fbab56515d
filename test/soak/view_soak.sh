#!/bin/bash
#
# Soak for views and failures (make check-long): for TC_SOAK_MINUTES
# (default 30), round after round, start 5 group members (posix, all
# sending), kill -9 one or two of them at random moments, and check that the
# survivors report identical hash chains and the same final view. Joins do
# not exist yet, so every round starts a fresh group instead of rejoining.
# Prints the kills survived and messages delivered.
set -u
: "${TC_BUILDDIR:?}"
probe=$TC_BUILDDIR/test/group_fault_probe
minutes=${TC_SOAK_MINUTES:-30}
export UCX_TLS=posix,self UCX_TC_WAIT_POLICY=sleep UCX_TC_SUSPECT_TIMEOUT=300ms \
       UCX_TC_HEARTBEAT_INTERVAL=10ms UCX_TC_BOOTSTRAP_TIMEOUT=5s
work=$(mktemp -d /tmp/tc-soak.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

end=$(( $(date +%s) + minutes * 60 ))
rounds=0 kills=0 delivered=0 failures=0
while [ "$(date +%s)" -lt "$end" ]; do
    n=5 port=$(( (RANDOM % 20000) + 30000 )) pids=()
    for ((r = 0; r < n; ++r)); do
        UCX_TC_SIZE=$n UCX_TC_RANK=$r UCX_TC_ROOT=127.0.0.1:$port \
            "$probe" -c 3000 -r 3000 > "$work/out.$r" 2>&1 &
        pids+=($!)
    done
    for ((r = 0; r < n; ++r)); do
        for _ in $(seq 1 500); do grep -q ready "$work/out.$r" 2>/dev/null && break; sleep 0.01; done
    done
    victims=$(shuf -i 0-4 -n $(( 1 + RANDOM % 2 )) | sort -n | tr '\n' ' ')
    for v in $victims; do
        sleep "0.$(( RANDOM % 6 ))"
        kill -9 "${pids[$v]}" 2>/dev/null
        kills=$((kills + 1))
    done
    wait "${pids[@]}" 2>/dev/null
    chains=$(for ((r = 0; r < n; ++r)); do
                 case " $victims " in *" $r "*) continue ;; esac
                 grep -o 'result chain [0-9a-f]* count [0-9]*' "$work/out.$r" || echo missing
             done | sort -u)
    if [ "$(echo "$chains" | wc -l)" -ne 1 ] || echo "$chains" | grep -q missing; then
        failures=$((failures + 1))
        echo "round $rounds: victims $victims: survivors disagree"
        for ((r = 0; r < n; ++r)); do echo "--- $r"; tail -5 "$work/out.$r"; done
    else
        delivered=$(( delivered + $(echo "$chains" | awk '{print $5}') ))
    fi
    rounds=$((rounds + 1))
done
echo "soak: $minutes min, $rounds rounds, $kills kills survived, $delivered messages delivered per survivor summed, $failures failed rounds"
[ "$failures" -eq 0 ]
