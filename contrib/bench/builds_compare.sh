#!/usr/bin/env bash
#
# Before and after: the same shapes from two build trees, interleaved round
# by round (A B A B ...), over one transport. For a change that should not
# move a number, e.g. the RMA lane on posix after the write lane moved into
# the runtime.
#
#   contrib/bench/builds_compare.sh BEFORE_BUILD AFTER_BUILD [--rounds R] [--tls TLS]
#                                   [--shapes "S ..."] [--aa]
#
# --aa runs each shape of the after tree a second time in every round
# ("build":"again") and prints, beside after / before, the median of again /
# after: the host's noise, measured in the same rounds. The order turns
# round by round (before, after, again; then again, after, before), so that
# after sits between the two others and both ratios see the same positions:
# a point run second in a pair was seen slower on this host.
#
# Shapes (default: smc_bw smc_lat put_ring ifunc_demo): smc_bw (all senders)
# and smc_lat at N = 3, 100 B (twochains-perf under twochains-run);
# smc_bw_batched the same batched; smc_inproc_{urgent,batched}_n{3,5} all
# members in one process (--inproc, window 256, 100 B); the put
# ring's hop latency at N = 3, 256 B; the ifunc demo's Local latency (2
# processes, built against each tree); and each tree's patched ucx_perftest
# (make -C BUILD perftest), pinned pair, 4-byte payload: ifunc_lat_local,
# ifunc_lat_injected, ifunc_lat_cached (p50), ifunc_bw_local (msg/s);
# ifunc_lat_public, ifunc_bw_public the same through the public API
# (UCX_TC_IFUNC_API=public; a tree whose perftest lacks it gives no point);
# ifunc_lat_portable-cached, ifunc_bw_portable-cached the Portable-Cached
# mode (bitcode compiled by the receiver once, then named by hash);
# jam_bw_{urgent,batched}_{local,injected,cached}: replicated jams
# (twochains-perf --jam, 3 processes, 100 B; both trees need --jam);
# rdmc_64k, rdmc_4m: one RDMC message to 4 processes (binomial, 256 KiB
# blocks), median time to all of 9 transfers. TC_COMPARE_LAT_ITERS and
# TC_COMPARE_BW_ITERS set the ifunc shapes' iterations (200000, 2000000:
# over tcp fewer). One JSON
# object per point ("build":"before"|"after","round":r), then the median over
# rounds of the per-round ratio after / before (> 1: after is slower for a
# latency, faster for a rate).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BUILD AFTER_BUILD [--rounds R] [--tls TLS]" >&2; exit 2; }
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd)
shift 2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=7 tls=posix,self shapes="smc_bw smc_lat put_ring ifunc_demo" aa=0
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --tls) tls=$2; shift ;;
        --shapes) shapes=$2; shift ;;
        --aa) aa=1 ;;
        *) echo "usage: $0 BEFORE_BUILD AFTER_BUILD [--rounds R] [--tls TLS] [--shapes LIST] [--aa]" >&2; exit 2 ;;
    esac
    shift
done
work=$(mktemp -d /tmp/tc-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT
tag() { sed "s/}\$/,\"build\":\"$1\",\"round\":$2}/"; }

demo() {   # build -> path of an ifunc_demo built against it
    local b=$1 exe=$work/ifunc_demo.$2 src
    src=$(sed -n 's/^abs_top_srcdir = //p' "$b/Makefile")
    cc -O2 "$src/contrib/examples/ifunc_demo.c" -o "$exe" -I"$src/ucx_ext/api" -I"$b/ucx_ext/api" \
        -L"$b/ucx_ext/.libs" -Wl,-rpath,"$b/ucx_ext/.libs" -ltwochains $(pkg-config --cflags --libs ucx)
    echo "$exe"
}
if [[ " $shapes " == *" ifunc_demo "* ]]; then
    demo_before=$(demo "$before" before)
    demo_after=$(demo "$after" after)
fi
# shellcheck source=contrib/bench/perftest_lib.sh
source "$here/perftest_lib.sh"   # free_port

perftest_ifunc() {   # build shape mode iters -> {"shape":..., "lat_p50_us" | "msg_rate"}
    local b=$1 shape=$2 mode=$3 n=$4 pt=$1/contrib/ucx_perftest/ucx_perftest port spid line
    local api=(UCX_TC_IFUNC_MODE="$mode")
    # the public API sends Injected frames, whatever the mode
    [ "$mode" = public ] && api=(UCX_TC_IFUNC_API=public UCX_TC_IFUNC_MODE=injected)
    [ -x "$pt" ] || { echo "builds_compare: no $pt (make -C $b perftest)" >&2; return 1; }
    port=$(free_port)
    env UCX_TLS="$tls" UCX_TC_IFUNC_PKG_PATH="$b/test/twochains-pkgs" "${api[@]}" \
        UCX_TC_IFUNC_JAM=indirect_put taskset -c 0 timeout 60 "$pt" -p "$port" >/dev/null 2>&1 &
    spid=$!
    for _ in $(seq 500); do [ -n "$(ss -Hltn "sport = :$port")" ] && break; sleep 0.01; done
    line=$(env UCX_TLS="$tls" UCX_TC_IFUNC_PKG_PATH="$b/test/twochains-pkgs" "${api[@]}" \
               UCX_TC_IFUNC_JAM=indirect_put taskset -c 1 timeout 60 "$pt" localhost -p "$port" \
               -t "ucp_$shape" -s 4 -n "$n" -f -I 2>/dev/null | grep -E '^ *[0-9]+ +[0-9.]+ ' | tail -1) ||
        true   # a run that failed (its server not up in time, say) gives no point, not the end
    wait "$spid" 2>/dev/null || true
    [ -n "$line" ] || return 0
    # a perftest without the public API ignores the variable: no point
    [ "$mode" != public ] || grep -q " us; public " <<<"$line" || return 0
    set -- $line
    if [ "$shape" = ifunc_lat ]; then
        echo "{\"shape\":\"${shape}_$mode\",\"lat_p50_us\":$(sed -n 's/.*p50 \([0-9.]*\) p99.9.*/\1/p' <<<"$line")}"
    else
        echo "{\"shape\":\"${shape}_$mode\",\"msg_rate\":$7}"
    fi
}

point() {   # name build round
    local name=$1 b=$2 r=$3 bin=$2/src/tools exe
    case $name in
        smc_bw|smc_lat)
            local extra=(-n 2000 -w 50)
            [ "$name" = smc_bw ] && extra=(-n 20000 -w 500 --senders all)
            UCX_TLS=$tls "$bin/twochains-run" -n 3 --timeout 300 -- \
                "$bin/twochains-perf" -t "$name" -s 100 "${extra[@]}" --json | sed -n 's/^\[0\] //p' ;;
        smc_bw_batched)
            UCX_TLS=$tls "$bin/twochains-run" -n 3 --timeout 300 -- \
                "$bin/twochains-perf" -t smc_bw -s 100 -n 300000 --window 256 --mode batched \
                --json | sed -n 's/^\[0\] //p' | sed 's/"shape":"smc_bw"/"shape":"smc_bw_batched"/' ;;
        jam_bw_*)   # replicated jams (twochains-perf --jam), 3 processes, 100 B
            local m=${name#jam_bw_}
            UCX_TLS=$tls "$bin/twochains-run" -n 3 --timeout 300 -- \
                "$bin/twochains-perf" -t smc_bw -s 100 -n 300000 --mode "${m%_*}" \
                --jam "${m#*_}" --pkgs "$b/test/twochains-pkgs" --json |
                sed -n 's/^\[0\] //p' | sed "s/\"shape\":\"smc_bw\"/\"shape\":\"$name\"/" ;;
        smc_inproc_*)
            local mode=${name#smc_inproc_} members=${name##*_n}
            mode=${mode%_n*}
            UCX_TLS=$tls "$bin/twochains-perf" --inproc --members "$members" -t smc_bw -s 100 \
                -n $(( members == 3 ? 300000 : 150000 )) --window 256 --mode "$mode" --json |
                sed "s/\"shape\":\"smc_bw\"/\"shape\":\"$name\"/" ;;
        rdmc_*)     # twochains-perf -t rdmc_bw, 4 processes, binomial
            UCX_TLS=$tls "$bin/twochains-run" -n 4 --timeout 300 -- \
                "$bin/twochains-perf" -t rdmc_bw -s "${name#rdmc_}" --block 256k -n 9 --json |
                sed -n 's/^\[0\] //p' | grep '^{' | sed "s/\"shape\":\"rdmc_bw\"/\"shape\":\"$name\"/" ;;
        put_ring)
            UCX_TLS=$tls "$bin/twochains-run" -n 3 --timeout 300 -- \
                "$bin/twochains-ring" -s 256 -n 5000 -w 100 --json | sed -n 's/^\[0\] //p' | grep '^{' ;;
        ifunc_demo)
            [ "$b" = "$before" ] && exe=$demo_before || exe=$demo_after
            UCX_TLS=$tls "$bin/twochains-run" -n 2 --timeout 300 -- "$exe" -P "$b/test/twochains-pkgs" \
                -n 5000 | sed -n 's/^\[0\] ifunc_demo: local *latency.* p50 \([0-9.]*\) us.*/{"shape":"ifunc_demo_local","lat_p50_us":\1}/p' ;;
        ifunc_lat_*) perftest_ifunc "$b" ifunc_lat "${name#ifunc_lat_}" "${TC_COMPARE_LAT_ITERS:-200000}" ;;
        ifunc_bw_*) perftest_ifunc "$b" ifunc_bw "${name#ifunc_bw_}" "${TC_COMPARE_BW_ITERS:-2000000}" ;;
    esac
}

for r in $(seq 1 "$rounds"); do
    echo "== round $r of $rounds" >&2
    for name in $shapes; do
        if [ "$aa" = 0 ]; then
            point "$name" "$before" "$r" | tag before "$r"
            point "$name" "$after" "$r" | tag after "$r"
        elif [ $((r % 2)) = 1 ]; then   # before, after, again
            point "$name" "$before" "$r" | tag before "$r"
            point "$name" "$after" "$r" | tag after "$r"
            point "$name" "$after" "$r" | tag again "$r"
        else                            # again, after, before
            point "$name" "$after" "$r" | tag again "$r"
            point "$name" "$after" "$r" | tag after "$r"
            point "$name" "$before" "$r" | tag before "$r"
        fi
    done
done | tee "$work/points.jsonl"

python3 - "$work/points.jsonl" <<'PY' >&2
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
field = {"smc_bw": "msg_rate", "smc_lat": "lat_avg_us", "put_ring": "hop_lat_p50_us",
         "smc_bw_batched": "msg_rate", "smc_inproc_urgent_n3": "msg_rate",
         "smc_inproc_batched_n3": "msg_rate", "smc_inproc_urgent_n5": "msg_rate",
         "smc_inproc_batched_n5": "msg_rate",
         "ifunc_demo_local": "lat_p50_us", "ifunc_lat_local": "lat_p50_us",
         "ifunc_lat_injected": "lat_p50_us", "ifunc_lat_cached": "lat_p50_us",
         "ifunc_bw_local": "msg_rate", "ifunc_lat_public": "lat_p50_us",
         "ifunc_bw_public": "msg_rate", "ifunc_lat_portable-cached": "lat_p50_us",
         "ifunc_bw_portable-cached": "msg_rate", "rdmc_64k": "time_to_all_s",
         "rdmc_4m": "time_to_all_s"}
field.update({f"jam_bw_{m}_{k}": "msg_rate" for m in ("urgent", "batched")
              for k in ("local", "injected", "cached")})
print("# median over rounds of after / before")
for shape, f in field.items():
    by = {(p["build"], p["round"]): p[f] for p in rows if p["shape"] == shape}
    def ratios(num, den):
        return [by[(num, r)] / by[(den, r)] for (b, r) in by
                if b == den and (num, r) in by and by[(den, r)]]
    ab = ratios("after", "before")
    if ab:
        b = statistics.median(v for (k, r), v in by.items() if k == "before")
        a = statistics.median(v for (k, r), v in by.items() if k == "after")
        print(f"{shape:18s} {f:15s} before {b:12.3f}  after {a:12.3f}  after/before {statistics.median(ab):.3f}"
              f"  (rounds: {', '.join(f'{x:.2f}' for x in sorted(ab))})")
    aa = ratios("again", "after")
    if aa:
        print(f"{'':18s} {'':15s} A/A again/after {statistics.median(aa):.3f}"
              f"  (rounds: {', '.join(f'{x:.2f}' for x in sorted(aa))})")
PY
