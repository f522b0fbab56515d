#!/usr/bin/env bash
#
# What security `confine` costs (docs/performance.md#confined-jams):
#  1. check, rewrite and compile per jam, against verify's compile of the
#     same module (confine_jit.c: tcbench and tckv);
#  2. the jam's run time: the verify-compiled entry called directly against
#     the confined entry run as the poll runs it (tc_confine_run), the same
#     payload, interleaved rounds, each with the memory accesses of a call;
#  3. per frame, the receiver's whole path: the patched ucx_perftest
#     (make -C BUILD perftest), ucp_ifunc_bw and ucp_ifunc_lat with
#     Portable-Cached frames of server_side_sum and indirect_put (1 KiB
#     payloads: 128 values, 64 puts), the receiver in verify and in confine
#     (UCX_TC_IFUNC_CONFINE_OWN=y: its own module confined), interleaved
#     verify, confine in every round.
# Ratios are confined / verify (time), the median of per-round ratios.
# One JSON object per point in OUT/*.jsonl; the summary on stdout and in
# OUT/summary.txt; plots (gnuplot) in OUT.
#
#   contrib/bench/confined_jams.sh [BUILD] [--rounds R] [--tls TLS] [--out DIR]
#
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build rounds=7 tls=posix,self out=$here/results/confined_jams
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build=$(cd "$1" && pwd); shift; fi
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --tls) tls=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "usage: $0 [BUILD] [--rounds R] [--tls TLS] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$out"
work=$(mktemp -d /tmp/tc-confined.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=contrib/bench/perftest_lib.sh
source "$here/perftest_lib.sh"   # free_port

# shellcheck disable=SC2046
cc -O2 -I"$top/ucx_ext" -I"$top/ucx_ext/api" -I"$build/ucx_ext/api" -I"$top/toolchain/api" \
    -I"$top/test/packages/tckv" "$here/confine_jit.c" -o "$work/confine_jit" \
    -L"$build/ucx_ext/.libs" -Wl,-rpath,"$build/ucx_ext/.libs" -ltwochains \
    $(pkg-config --cflags --libs ucx)
pkgs=$build/test/twochains-pkgs
{
    # ping calls its ried's function: vouched for here
    UCX_TC_IFUNC_CONFINE_ALLOW=tcbench_ping_reply taskset -c 1 "$work/confine_jit" "$pkgs" \
        tcbench "$rounds" 200000
    taskset -c 1 "$work/confine_jit" "$pkgs" tckv "$rounds" 500000
} >"$out/jit_$(uname -m).jsonl"

pt=$build/contrib/ucx_perftest/ucx_perftest
[ -x "$pt" ] || { echo "confined_jams.sh: no $pt (make -C $build perftest)" >&2; exit 1; }
perftest_point() {   # round jam shape security -> one JSON object, or nothing
    local r=$1 jam=$2 shape=$3 sec=$4 port spid line n=400000
    [ "$shape" = ifunc_lat ] && n=100000
    [ "${tls%%,*}" = tcp ] && n=$((n / 4))
    port=$(free_port)
    env UCX_TLS="$tls" UCX_TC_IFUNC_PKG_PATH="$pkgs" UCX_TC_IFUNC_MODE=portable-cached \
        UCX_TC_IFUNC_JAM="$jam" UCX_TC_IFUNC_SECURITY="$sec" UCX_TC_IFUNC_CONFINE_OWN=y \
        taskset -c 0 timeout 120 "$pt" -p "$port" >/dev/null 2>&1 &
    spid=$!
    for _ in $(seq 500); do [ -n "$(ss -Hltn "sport = :$port")" ] && break; sleep 0.01; done
    line=$(env UCX_TLS="$tls" UCX_TC_IFUNC_PKG_PATH="$pkgs" UCX_TC_IFUNC_MODE=portable-cached \
               UCX_TC_IFUNC_JAM="$jam" UCX_TC_IFUNC_SECURITY="$sec" UCX_TC_IFUNC_CONFINE_OWN=y \
               taskset -c 1 timeout 120 "$pt" localhost -p "$port" -t "ucp_$shape" -s 1024 \
               -n "$n" -f -I 2>/dev/null | grep -E '^ *[0-9]+ +[0-9.]+ ' | tail -1) || true
    wait "$spid" 2>/dev/null || true
    [ -n "$line" ] || return 0
    set -- $line
    if [ "$shape" = ifunc_lat ]; then
        echo "{\"round\":$r,\"jam\":\"$jam\",\"shape\":\"$shape\",\"security\":\"$sec\",\"lat_p50_us\":$(sed -n 's/.*p50 \([0-9.]*\) p99.9.*/\1/p' <<<"$line")}"
    else
        echo "{\"round\":$r,\"jam\":\"$jam\",\"shape\":\"$shape\",\"security\":\"$sec\",\"msg_rate\":$7}"
    fi
}
name=perftest_${tls%%,*}
: >"$out/$name.jsonl"
for r in $(seq "$rounds"); do
    for jam in server_side_sum indirect_put; do
        for shape in ifunc_bw ifunc_lat; do
            # which goes first alternates with the round
            order="verify confine"; [ $((r % 2)) = 0 ] && order="confine verify"
            for sec in $order; do
                perftest_point "$r" "$jam" "$shape" "$sec" >>"$out/$name.jsonl"
            done
        done
    done
done

python3 - "$out" "$(uname -m)" "$name" "$tls" <<'PY' | tee "$out/summary_${3:-x}.txt"
import json, statistics, sys
out, arch, name, tls = sys.argv[1:5]
rows = [json.loads(l) for l in open(f"{out}/jit_{arch}.jsonl") if l.startswith("{")]
print("# check, rewrite and compile (once per code), ms; verify's compile of the same module")
for r in rows:
    if r["point"] == "compile":
        c = r["confined_ms"] if r["confined"] == "yes" else "refused: " + r["confined"]
        print(f"  {r['jam']:16s} {r['bc_bytes']:6d} B  verify {r['verify_ms']:7.2f}  confine {c}")
print("# the jam's run: confined / verify, median of per-round ratios")
with open(f"{out}/run.dat", "w") as f:
    for j in sorted({r["jam"] for r in rows if r["point"] == "run"}):
        rr = [r for r in rows if r["point"] == "run" and r["jam"] == j]
        ratios = [r["confined_ns"] / r["verify_ns"] for r in rr]
        med = statistics.median(ratios)
        f.write(f"{j} {rr[0]['accesses']} {med}\n")
        print(f"  {j:16s} {rr[0]['accesses']:4d} accesses  verify "
              f"{statistics.median(r['verify_ns'] for r in rr):7.2f} ns  confined "
              f"{statistics.median(r['confined_ns'] for r in rr):7.2f} ns  ratio {med:.2f} "
              f"({len(ratios)} rounds, {min(ratios):.2f}-{max(ratios):.2f})")
pts = [json.loads(l) for l in open(f"{out}/{name}.jsonl") if l.startswith("{")]
print(f"# per frame, {tls}, Portable-Cached, 1 KiB payload: confine / verify (time), "
      "median of per-round ratios")
for jam in ("server_side_sum", "indirect_put"):
    for shape, key in (("ifunc_bw", "msg_rate"), ("ifunc_lat", "lat_p50_us")):
        ratios = []
        for r in sorted({p["round"] for p in pts}):
            v = {p["security"]: p[key] for p in pts
                 if p["round"] == r and p["jam"] == jam and p["shape"] == shape}
            if "verify" in v and "confine" in v:
                ratios.append(v["verify"] / v["confine"] if key == "msg_rate" else
                              v["confine"] / v["verify"])
        if ratios:
            print(f"  {jam:16s} {shape:10s} ratio {statistics.median(ratios):.2f} "
                  f"({len(ratios)} rounds, {min(ratios):.2f}-{max(ratios):.2f})")
PY

command -v gnuplot >/dev/null || { echo "confined_jams.sh: no gnuplot, no plot" >&2; exit 0; }
gnuplot <<EOF
set terminal pngcairo size 800,480 noenhanced
set output "$out/confined_run.png"
set title "confine / verify, the jam's run time, against its memory accesses per call"
set xlabel "loads and stores per call"
set ylabel "run time ratio (median of per-round ratios)"
set logscale x
set key off
set yrange [0:*]
plot "$out/run.dat" using 2:3 with points pointtype 7 pointsize 1.5, \
     "" using 2:3:1 with labels offset 0,1, 1.3 with lines dashtype 2 title "target"
EOF
echo "plot: $out/confined_run.png"
