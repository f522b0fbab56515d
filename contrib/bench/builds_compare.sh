#!/usr/bin/env bash
#
# Before and after: the same shapes from two build trees, interleaved round
# by round (A B A B ...), over one transport. For a change that should not
# move a number, e.g. the RMA lane on posix after the write lane moved into
# the runtime.
#
#   contrib/bench/builds_compare.sh BEFORE_BUILD AFTER_BUILD [--rounds R] [--tls TLS]
#
# Shapes: smc_bw (all senders) and smc_lat at N = 3, 100 B (twochains-perf
# under twochains-run); the put ring's hop latency at N = 3, 256 B; the
# ifunc demo's Local latency (2 processes, built against each tree). One JSON
# object per point ("build":"before"|"after","round":r), then the median over
# rounds of the per-round ratio after / before (> 1: after is slower for a
# latency, faster for a rate).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BUILD AFTER_BUILD [--rounds R] [--tls TLS]" >&2; exit 2; }
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd)
shift 2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=7 tls=posix,self
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --tls) tls=$2; shift ;;
        *) echo "usage: $0 BEFORE_BUILD AFTER_BUILD [--rounds R] [--tls TLS]" >&2; exit 2 ;;
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
demo_before=$(demo "$before" before)
demo_after=$(demo "$after" after)

point() {   # name build round
    local name=$1 b=$2 r=$3 bin=$2/src/tools exe
    case $name in
        smc_bw|smc_lat)
            local extra=(-n 2000 -w 50)
            [ "$name" = smc_bw ] && extra=(-n 20000 -w 500 --senders all)
            UCX_TLS=$tls "$bin/twochains-run" -n 3 --timeout 300 -- \
                "$bin/twochains-perf" -t "$name" -s 100 "${extra[@]}" --json | sed -n 's/^\[0\] //p' ;;
        put_ring)
            UCX_TLS=$tls "$bin/twochains-run" -n 3 --timeout 300 -- \
                "$bin/twochains-ring" -s 256 -n 5000 -w 100 --json | sed -n 's/^\[0\] //p' | grep '^{' ;;
        ifunc_demo)
            [ "$b" = "$before" ] && exe=$demo_before || exe=$demo_after
            UCX_TLS=$tls "$bin/twochains-run" -n 2 --timeout 300 -- "$exe" -P "$b/test/twochains-pkgs" \
                -n 5000 | sed -n 's/^\[0\] ifunc_demo: local *latency.* p50 \([0-9.]*\) us.*/{"shape":"ifunc_demo_local","lat_p50_us":\1}/p' ;;
    esac
}

for r in $(seq 1 "$rounds"); do
    echo "== round $r of $rounds" >&2
    for name in smc_bw smc_lat put_ring ifunc_demo; do
        point "$name" "$before" "$r" | tag before "$r"
        point "$name" "$after" "$r" | tag after "$r"
    done
done | tee "$work/points.jsonl"

python3 - "$work/points.jsonl" <<'PY' >&2
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
field = {"smc_bw": "msg_rate", "smc_lat": "lat_avg_us", "put_ring": "hop_lat_p50_us",
         "ifunc_demo_local": "lat_p50_us"}
print("# median over rounds of after / before")
for shape, f in field.items():
    by = {(p["build"], p["round"]): p[f] for p in rows if p["shape"] == shape}
    ratios = [by[("after", r)] / by[("before", r)] for (b, r) in by
              if b == "before" and ("after", r) in by and by[("before", r)]]
    if ratios:
        b = statistics.median(v for (k, r), v in by.items() if k == "before")
        a = statistics.median(v for (k, r), v in by.items() if k == "after")
        print(f"{shape:18s} {f:15s} before {b:12.3f}  after {a:12.3f}  after/before {statistics.median(ratios):.3f}"
              f"  (rounds: {', '.join(f'{x:.2f}' for x in sorted(ratios))})")
PY
