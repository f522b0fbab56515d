#!/bin/bash
#
# Soak for views, failures and joins (make check-long): for TC_SOAK_MINUTES
# (default 30), round after round, start 5 group members (over
# TC_SOAK_TLS: posix, the default, or tcp; all sending, each with a join port), then three times: kill -9 a random live
# member at a random moment, wait for the survivors' view, and let a new
# process join through a random surviving original member (state transfer
# included). At the end of a round every live process -- survivors and
# joiners -- must report the identical hash chain (deliveries, views and the
# transferred state) and the same final view.
# Prints rounds, kills survived, joins, and messages delivered.
set -u
: "${TC_BUILDDIR:?}"
probe=$TC_BUILDDIR/test/helpers/group_fault_probe
minutes=${TC_SOAK_MINUTES:-30}
cycles=${TC_SOAK_CYCLES:-3}
tls=${TC_SOAK_TLS:-posix}
case $tls in *,*) ;; *) tls=$tls,self ;; esac
export UCX_TLS=$tls UCX_TC_BOOTSTRAP_TIMEOUT=5s
# shellcheck source=contrib/bench/perftest_lib.sh
source "$(dirname "$0")/../../contrib/bench/perftest_lib.sh"   # free_port
work=$(mktemp -d /tmp/tc-soak.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

# wait_line FILE... -- PATTERN TIMEOUT_S: every FILE has a line matching
wait_line() {
    local files=() pattern timeout f t=0
    while [ "$1" != -- ]; do files+=("$1"); shift; done
    pattern=$2 timeout=$3
    while [ "$t" -lt $(( timeout * 100 )) ]; do
        local all=1
        for f in "${files[@]}"; do grep -qE "$pattern" "$f" 2>/dev/null || { all=0; break; }; done
        [ "$all" = 1 ] && return 0
        sleep 0.01; t=$((t + 1))
    done
    return 1
}

end=$(( $(date +%s) + minutes * 60 ))
rounds=0 kills=0 joins=0 delivered=0 failures=0 expelled=0
while [ "$(date +%s)" -lt "$end" ]; do
    # join ports base..base+4 stay below free_port's range
    n=5 base=$(( (RANDOM % 8000) + 10000 )) port=$(free_port)
    declare -A pid=()
    live=()
    for ((r = 0; r < n; ++r)); do
        UCX_TC_SIZE=$n UCX_TC_RANK=$r UCX_TC_ROOT=127.0.0.1:$port \
            "$probe" -c 30000 -r 3000 -J "$base" > "$work/out.$r" 2>&1 &
        pid[$r]=$!
        live+=("$r")
    done
    outs() { for r in "${live[@]}"; do echo "$work/out.$r"; done; }
    ok=1
    wait_line $(outs) -- '^ready' 20 || ok=0
    epoch=1 next_id=$n
    for ((c = 0; c < cycles && ok; ++c)); do
        sleep "0.$(( RANDOM % 5 ))"
        victim=${live[$(( RANDOM % ${#live[@]} ))]}
        kill -9 "${pid[$victim]}" 2>/dev/null
        wait "${pid[$victim]}" 2>/dev/null   # reaped here, quietly
        kills=$((kills + 1))
        live=($(for r in "${live[@]}"; do [ "$r" = "$victim" ] || echo "$r"; done))
        epoch=$((epoch + 1))
        wait_line $(outs) -- "^view $epoch " 20 || { ok=0; break; }
        originals=($(for r in "${live[@]}"; do [ "$r" -lt "$n" ] && echo "$r"; done))
        sponsor=${originals[$(( RANDOM % ${#originals[@]} ))]}
        id=$next_id
        next_id=$((next_id + 1))
        "$probe" -c 1500 -r 3000 -j "127.0.0.1:$((base + sponsor))" > "$work/out.$id" 2>&1 &
        pid[$id]=$!
        live+=("$id")
        epoch=$((epoch + 1))
        wait_line $(outs) -- "^view $epoch " 30 || { ok=0; break; }
        joins=$((joins + 1))
    done
    for r in "${!pid[@]}"; do wait "${pid[$r]}" 2>/dev/null; done
    kept=()
    for r in "${live[@]}"; do
        if grep -q 'expelled from the group' "$work/out.$r"; then
            expelled=$((expelled + 1))
        else
            kept+=("$r")
        fi
    done
    live=("${kept[@]}")
    members=$(echo "${live[@]}" | tr ' ' '\n' | sort -n | paste -sd,)
    chains=$(for r in "${live[@]}"; do
                 grep -o 'result chain [0-9a-f]* count [0-9]*' "$work/out.$r" || echo missing
             done | sort -u)
    views=$(for r in "${live[@]}"; do grep '^view ' "$work/out.$r" | tail -1; done | sort -u)
    if [ "$ok" != 1 ] || [ "$(echo "$chains" | wc -l)" -ne 1 ] || [ "$(echo "$views" | wc -l)" -ne 1 ] ||
       echo "$chains" | grep -q missing || [ "$(echo "$views" | awk '{print $3}')" != "$members" ]; then
        failures=$((failures + 1))
        echo "round $rounds: live ${live[*]}: views or chains disagree (or a step timed out)"
        for r in "${!pid[@]}"; do echo "--- $r"; tail -6 "$work/out.$r"; done
    else
        delivered=$(( delivered + $(echo "$chains" | awk '{print $5}') ))
    fi
    unset pid
    rounds=$((rounds + 1))
done
echo "soak: $UCX_TLS, $minutes min, $rounds rounds, $kills kills survived, $joins joins with state transfer, $expelled live members expelled, $delivered messages delivered (final count of one live process per round, summed), $failures failed rounds"
[ "$failures" -eq 0 ]
