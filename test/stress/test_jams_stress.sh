#!/usr/bin/env bash
#
# Replicated jams beside a CPU hog, with the defaults (wait policy and
# security mode included): stress-ng --cpu 2 --cpu-load 60 on this 2-core
# machine while contrib/examples/replicated_kv (test/helpers/replicated_kv)
# sends tckv's put, increment and compare-and-swap jams:
#  - 3 members under twochains-run in each mode (Local, Injected, Cached),
#    over posix and tcp: every member ran every jam, and all report one
#    state digest, equal to their reference replayed from the delivered
#    sequence, and one hash chain over the delivered jams;
#  - the quickstart's scenario (contrib/examples/replicated_kv_demo.sh):
#    3 writers, one killed mid-stream, a joiner with the state and codes;
#    survivors and joiner end with one digest, equal to the reference.
# TC_STRESS_ROUNDS repeats the matrix (2 in make check; 20 in make check-long).
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"
rounds=${TC_STRESS_ROUNDS:-2}
run=$TC_BUILDDIR/src/tools/twochains-run
kv=$TC_BUILDDIR/test/helpers/replicated_kv
pkgs=$TC_BUILDDIR/test/twochains-pkgs
work=$(mktemp -d /tmp/tc-jstress.XXXXXX)
source "$TC_SRCDIR/test/stress/hog_lib.sh"
cleanup() { hog_stop; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

[ -x "$kv" ] || { echo "FAIL: $kv is not built"; exit 1; }
unset UCX_TC_WAIT_POLICY UCX_TC_SMC_MODE UCX_TC_IFUNC_SECURITY   # the defaults

hog_start

runs=0 failed=0
# modes_run NAME MODE COUNT: 3 members, COUNT commands each
modes_run() {
    local name=$1 mode=$2 count=$3 log lines distinct
    log=$work/$name.log
    runs=$((runs + 1))
    if ! UCX_TLS=$tls "$run" -n 3 --timeout 240 -- "$kv" -P "$pkgs" -m "$mode" -c "$count" \
            -r 3000 >"$log" 2>&1; then
        echo "FAIL: $name ($tls): exit status"; tail -15 "$log"; failed=$((failed + 1)); return
    fi
    lines=$(sed -n 's/.*\] result digest \([0-9a-f]*\) reference \1 chain \([0-9a-f]*\) run \([0-9]*\) .*status Success$/\1 \2 \3/p' "$log")
    distinct=$(sort -u <<<"$lines" | grep -c . || true)
    if [ "$(grep -c . <<<"$lines")" != 3 ] || [ "$distinct" != 1 ] ||
       [ "$(awk '{print $3}' <<<"$lines" | sort -u)" != $((3 * count)) ] ||
       grep -Eq 'UCX +(WARN|ERROR|FATAL)' "$log"; then
        echo "FAIL: $name ($tls): members disagree, or not every jam ran everywhere:"
        tail -15 "$log"; failed=$((failed + 1)); return
    fi
    echo "ok: $name ($tls): 3 members ran $((3 * count)) $mode jams to one state"
}

for round in $(seq "$rounds"); do
    for tls in posix,self tcp,self; do
        if [ "$tls" = posix,self ]; then c=3000; else c=600; fi
        for mode in local injected cached; do
            modes_run "$mode-$round" "$mode" "$c"
        done
        runs=$((runs + 1))
        if out=$(UCX_TLS=$tls "$TC_SRCDIR/contrib/examples/replicated_kv_demo.sh" "$kv" "$pkgs" 2>&1); then
            echo "ok: kill-and-join-$round ($tls): $(tail -1 <<<"$out")"
        else
            echo "FAIL: kill-and-join-$round ($tls):"; tail -15 <<<"$out"; failed=$((failed + 1))
        fi
    done
done

hog_alive
if [ "$failed" -ne 0 ]; then
    echo "FAIL: $failed of $runs replicated-jam runs beside stress-ng"
    exit 1
fi
echo "PASS: $runs replicated-jam runs beside stress-ng --cpu 2 --cpu-load 60, defaults: one state everywhere, equal to the reference"
