#!/usr/bin/env bash
#
# The replicated key-value store (replicated_kv.c) through a failure and a
# join: 3 processes write put, increment and compare-and-swap jams
# concurrently; rank 2 is killed (SIGKILL) in the middle; once the others
# installed the view without it, a new process joins through rank 0's join
# port with the state and the codes, and writes too. Every live member then
# prints the digest of its state and of the reference replayed from the
# delivered sequence; they must all be one digest.
#
# Usage: replicated_kv_demo.sh KV_BINARY PKG_PREFIX [MODE]
#   UCX_TLS picks the transport (default posix,self); MODE: local, injected,
#   cached (default), portable
# Exit 0 when every live member agrees, 1 otherwise.
set -euo pipefail
kv=$1 pkgs=$2 mode=${3:-cached}
tls=${UCX_TLS:-posix,self}
work=$(mktemp -d /tmp/tc-kv-demo.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

free_port() {   # below the ephemeral range, nobody listening
    local p
    while :; do
        p=$(( (RANDOM % 12000) + 20000 ))
        [ -n "$(ss -Hltn "sport = :$p" 2>/dev/null)" ] || { echo "$p"; return; }
    done
}
# a joiner proves the job's key: one for this run
export UCX_TC_JOB_KEY="replicated-kv-demo-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export UCX_TLS=$tls
root=$(free_port)
join=$(free_port)

for r in 0 1 2; do
    kill_arg=""
    [ "$r" = 2 ] && kill_arg="-K 1500"
    # through sh, so that the victim's signal is its exit status (137),
    # not a job this shell reports as killed
    UCX_TC_SIZE=3 UCX_TC_RANK=$r UCX_TC_ROOT=127.0.0.1:$root sh -c '"$@"; exit $?' sh \
        "$kv" -P "$pkgs" -m "$mode" -c 4000 -r 2000 -w 1 -J "$join" $kill_arg >"$work/$r" 2>&1 &
    pids+=($!)
done
# rank 2 dies after 1500 of its commands; the others go on without it
for ((t = 0; t < 6000; ++t)); do
    grep -q '^view 2' "$work/0" && grep -q '^view 2' "$work/1" && break
    sleep 0.01
done
grep -q '^view 2' "$work/0" || { echo "FAIL: no view without rank 2 after 60 s"; cat "$work"/[012]; exit 1; }
echo "rank 2 killed itself mid-stream; ranks 0 and 1 installed view 2 without it"
"$kv" -P "$pkgs" -m "$mode" -c 1000 -r 2000 -j "127.0.0.1:$join" >"$work/3" 2>&1 &
pids+=($!)

status=0
for r in 0 1 2 3; do
    rc=0
    wait "${pids[$r]}" || rc=$?
    if [ "$r" = 2 ]; then
        [ "$rc" = 137 ] || { echo "FAIL: rank 2 exited $rc, not killed"; status=1; }
    elif [ "$rc" != 0 ]; then
        echo "FAIL: member $r exited $rc"; tail -5 "$work/$r"; status=1
    fi
done
grep -h '^state received' "$work/3" | sed 's/^/joiner: /'
for r in 0 1 3; do
    echo "member $r: $(grep '^result' "$work/$r" || echo "no result")"
done
digests=$(for r in 0 1 3; do
              sed -n 's/^result digest \([0-9a-f]*\) reference \([0-9a-f]*\) chain \([0-9a-f]*\).*/\1 \2 \3/p' "$work/$r"
          done | sort -u)
if [ "$(grep -c . <<<"$digests")" != 1 ] ||
   [ "$(awk '{print $1}' <<<"$digests")" != "$(awk '{print $2}' <<<"$digests")" ]; then
    echo "FAIL: the live members' states or sequences differ: $digests"
    status=1
fi
[ "$status" = 0 ] && echo "replicated_kv ($mode, $tls): 2 survivors and a joiner hold one state, digest $(awk '{print $1}' <<<"$digests") = the reference replayed from the delivered sequence"
exit "$status"
