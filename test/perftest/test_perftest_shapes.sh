#!/usr/bin/env bash
#
# The ucx_perftest shapes ucp_ifunc_lat, ucp_ifunc_bw (Two-Chains) and
# ucp_smc_lat, ucp_smc_bw (the group's multicast): build the patched
# perftest (contrib/ucx_perftest/build.sh; the UCX source is fetched once
# into a cache outside the build tree) and run each shape once per mode (the
# ifunc shapes also with the public API) with a tiny iteration count as an
# (unpinned) server/client pair, checking that it runs and prints the
# columns every ucx_perftest shape prints (-f and -v CSV), with sane values.
# Skips (77), saying why, when the UCX source cannot be had here.
#
set -euo pipefail
: "${TC_SRCDIR:?}" "${TC_BUILDDIR:?}"

build_log=$(mktemp /tmp/tc-perftest-build.XXXXXX)
work=$(mktemp -d /tmp/tc-perftest.XXXXXX)
trap 'rm -rf "$work" "$build_log"' EXIT

rc=0
"$TC_SRCDIR/contrib/ucx_perftest/build.sh" --builddir="$TC_BUILDDIR" >"$build_log" 2>&1 || rc=$?
cat "$build_log"
if [ "$rc" = 77 ]; then
    echo "SKIP: $(grep 'cannot get' "$build_log" | head -1)"
    exit 77
fi
[ "$rc" = 0 ] || { echo "FAIL: build.sh exited $rc"; exit 1; }

perftest=$TC_BUILDDIR/contrib/ucx_perftest/ucx_perftest
usage=$("$perftest" -h 2>&1 || true)
for shape in ucp_ifunc_lat ucp_ifunc_bw; do
    grep -q " $shape - UCP ifunc" <<<"$usage" || { echo "FAIL: -h does not list $shape"; exit 1; }
done
for shape in ucp_smc_lat ucp_smc_bw; do
    grep -q " $shape - UCP smc multicast" <<<"$usage" || { echo "FAIL: -h does not list $shape"; exit 1; }
done

# shellcheck source=contrib/bench/perftest_lib.sh
source "$TC_SRCDIR/contrib/bench/perftest_lib.sh"   # free_port: not in the ephemeral range

fail=0
# run TLS SHAPE SIZE ITERS FORMAT(-f|-v) [VAR=VALUE...]: the client's output
run() {
    local tls=$1 shape=$2 size=$3 iters=$4 fmt=$5 port i spid src=0 crc=0
    shift 5
    port=$(free_port)
    # the ifunc shapes' own timeout, below the script's (read only by them)
    local own=()
    [[ $shape == ucp_ifunc_* ]] && own=(UCX_TC_IFUNC_TIMEOUT=20s)
    env UCX_TLS="$tls" "${own[@]}" "$@" timeout 60 "$perftest" -p "$port" \
        >"$work/server" 2>&1 &
    spid=$!
    for i in $(seq 500); do
        [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && break
        sleep 0.01
    done
    env UCX_TLS="$tls" "${own[@]}" "$@" timeout 60 "$perftest" localhost \
        -p "$port" -t "$shape" -s "$size" -n "$iters" -w 10 "$fmt" -I >"$work/client" 2>&1 || crc=$?
    wait "$spid" || src=$?
    if [ "$crc" != 0 ] || [ "$src" != 0 ] ||
       grep -qE 'UCX +(ERROR|WARN|FATAL)' "$work/server" "$work/client"; then
        echo "FAIL: $shape $* over $tls exited $crc/$src:"
        cat "$work/client" "$work/server"
        return 1
    fi
    cat "$work/client"
}

# check_final SHAPE ITERS LINE: 8 numeric columns, iterations, positive values
check_final() {
    local shape=$1 iters=$2 line=$3
    awk -v n="$iters" -v shape="$shape" '{
        if (NF < 8) { print "FAIL: " shape ": fewer than 8 columns: " $0; exit 1 }
        for (i = 1; i <= 8; ++i) if ($i !~ /^[0-9]+(\.[0-9]+)?$/) {
            print "FAIL: " shape ": column " i " is not a number: " $0; exit 1 }
        if ($1 != n) { print "FAIL: " shape ": " $1 " iterations, asked " n; exit 1 }
        if ($2 <= 0 || $3 <= 0 || $4 <= 0 || $8 <= 0) {
            print "FAIL: " shape ": latency or rate not positive: " $0; exit 1 }
        if ($3 > 100000) { print "FAIL: " shape ": latency " $3 " us"; exit 1 }
    }' <<<"$line"
}

for tls in posix,self tcp,self; do
    for shape in ucp_ifunc_lat ucp_ifunc_bw; do
        for mode in local injected cached; do
            [ "$tls" = tcp,self ] && [ "$mode" = injected ] && continue  # keep it short
            out=$(run "$tls" "$shape" 64 200 -f UCX_TC_IFUNC_MODE=$mode) ||
                { echo "$out"; fail=1; continue; }
            line=$(grep -E '^ *[0-9]+ +[0-9.]+ ' <<<"$out" | tail -1)
            echo "$tls $shape $mode: $line"
            check_final "$shape" 200 "$line" || { fail=1; continue; }
            # -I: mode, jam, frame size and transport, and the percentiles;
            # 64 B of payload: compact Local 40 + 64, compact Cached 48 + 64
            # (the default check signal), Injected the full header and code
            case $mode in local) frame=104 ;; cached) frame=112 ;; *) frame=448 ;; esac
            grep -Eq "p50 [0-9.]+ p99.9 [0-9.]+ us; $mode tcbench.indirect_put, $frame-byte frames over ${tls%%,*}" <<<"$line" ||
                { echo "FAIL: extra information: $line"; fail=1; }
        done
    done
done

# UCX_TC_IFUNC_API=public: the same jam through ucp_ifunc_send_nbix and
# ucp_poll_ifunc (Injected frames, slots of a multiple of 64 bytes: 1 for
# lat, the default ring depth 64 for bw). The shape itself fails on a
# rejected frame and unless the peer's count of frames run equals the
# number sent; -I says both, and the client is bw's sender
for tls in posix,self tcp,self; do
    for shape in ucp_ifunc_lat ucp_ifunc_bw; do
        out=$(run "$tls" "$shape" 64 200 -f UCX_TC_IFUNC_API=public) ||
            { echo "$out"; fail=1; continue; }
        line=$(grep -E '^ *[0-9]+ +[0-9.]+ ' <<<"$out" | tail -1)
        echo "$tls $shape public: $line"
        check_final "$shape" 200 "$line" || { fail=1; continue; }
        if [ "$shape" = ucp_ifunc_lat ]; then slots=1 here=200; else slots=64 here=0; fi
        re="p50 [0-9.]+ p99.9 [0-9.]+ us; public tcbench.indirect_put, ([0-9]+)-byte frames over ${tls%%,*}[^,]*, $slots slots of ([0-9]+),.* frames 200 sent, 200 run by the peer, $here run here\$"
        if ! [[ $line =~ $re ]] ||
           [ "${BASH_REMATCH[2]}" != $(( (BASH_REMATCH[1] + 63) / 64 * 64 )) ]; then
            echo "FAIL: public API extra information: $line"; fail=1
        fi
    done
done

# a frame the receiver rejects (Injected code, local-only security) fails
# the public shape loudly at the receiver, and the sender on its timeout
if out=$(run posix,self ucp_ifunc_lat 8 10 -f UCX_TC_IFUNC_API=public \
             UCX_TC_IFUNC_SECURITY=local-only UCX_TC_IFUNC_TIMEOUT=2s 2>&1); then
    echo "FAIL: a rejected public-API frame passed"; fail=1
fi
grep -q "ucp_poll_ifunc rejected a frame" "$work/server" "$work/client" ||
    { echo "FAIL: no clear error for a rejected frame"; cat "$work/server" "$work/client"; fail=1; }

# the group spans server and client; urgent or batched by UCX_TC_SMC_MODE;
# every delivered message's number and size are checked by the shape itself
for tls in posix,self tcp,self; do
    for shape in ucp_smc_lat ucp_smc_bw; do
        for mode in urgent batched; do
            [ "$tls" = tcp,self ] && [ "$mode" = urgent ] && continue  # keep it short
            out=$(run "$tls" "$shape" 100 500 -f UCX_TC_SMC_MODE=$mode) ||
                { echo "$out"; fail=1; continue; }
            line=$(grep -E '^ *[0-9]+ +[0-9.]+ ' <<<"$out" | tail -1)
            echo "$tls $shape $mode: $line"
            check_final "$shape" 500 "$line" || { fail=1; continue; }
            senders=$([ "$shape" = ucp_smc_lat ] && echo "two senders" || echo "one sender")
            grep -Eq "p50 [0-9.]+ p99.9 [0-9.]+ us; smc $mode, $senders, -s 100" <<<"$line" ||
                { echo "FAIL: extra information: $line"; fail=1; }
        done
    done
done

# CSV (-v): the header and the same 8 columns, comma-separated
out=$(run posix,self ucp_ifunc_lat 8 100 -v UCX_TC_IFUNC_MODE=cached UCX_TC_IFUNC_JAM=server_side_sum) ||
    { echo "$out"; fail=1; }
echo "$out"
grep -q '^iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr$' <<<"$out" ||
    { echo "FAIL: no CSV header"; fail=1; }
csv=$(grep -E '^ *[0-9]+,' <<<"$out" | tail -1)
check_final ucp_ifunc_lat 100 "$(tr ',' ' ' <<<"$csv")" || fail=1

# a jam the package does not have: both sides fail, saying so, no hang
if out=$(run posix,self ucp_ifunc_lat 8 10 -f UCX_TC_IFUNC_JAM=no_such_jam 2>&1); then
    echo "FAIL: an unknown jam ran"; fail=1
fi
grep -q "package tcbench has no jam 'no_such_jam'" "$work/server" "$work/client" ||
    { echo "FAIL: no clear error for an unknown jam"; cat "$work/server" "$work/client"; fail=1; }

[ "$fail" = 0 ] && echo "PASS: ucp_ifunc_lat and ucp_ifunc_bw, Local/Injected/Cached and the public API, posix and tcp;" \
                       "ucp_smc_lat and ucp_smc_bw, urgent and batched"
exit "$fail"
