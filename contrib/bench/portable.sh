#!/usr/bin/env bash
#
# What Portable jams cost, measured (docs/performance.md#portable-jams):
#  1. the first frame's compile, per jam and module size, on this host
#     (portable_jit.c: tcbench and tckv, each module compiled once, and the
#     one-time load of LLVM and creation of the JIT);
#  2. the compiled code's run time against the package's own machine code,
#     same jam, same payload, interleaved rounds (tcbench);
#  3. Portable-Cached against Local in the ucx_perftest shapes
#     ucp_ifunc_lat and ucp_ifunc_bw (patched ucx_perftest: make -C BUILD
#     perftest), interleaved rounds, through builds_compare.sh with the tree
#     against itself, then the median of per-round ratios (shape_ratios.py).
# One JSON object per point in OUT/*.jsonl; the summary on stdout.
#
#   contrib/bench/portable.sh [BUILD] [--rounds R] [--tls TLS] [--out DIR]
#
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build rounds=7 tls=posix,self out=$here/results/portable
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
work=$(mktemp -d /tmp/tc-portable.XXXXXX)
trap 'rm -rf "$work"' EXIT

# shellcheck disable=SC2046
cc -O2 -I"$top/ucx_ext" -I"$top/ucx_ext/api" -I"$build/ucx_ext/api" -I"$top/toolchain/api" \
    "$here/portable_jit.c" -o "$work/portable_jit" -L"$build/ucx_ext/.libs" \
    -Wl,-rpath,"$build/ucx_ext/.libs" -ltwochains $(pkg-config --cflags --libs ucx)

pkgs=$build/test/twochains-pkgs
{
    taskset -c 1 "$work/portable_jit" "$pkgs" tcbench "$rounds" 200000
    taskset -c 1 "$work/portable_jit" "$pkgs" tckv 0 0 | grep '"compile"'
} >"$out/jit_$(uname -m).jsonl"

python3 - "$out/jit_$(uname -m).jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("# first frame: one compile per module (this host), ms")
for r in rows:
    if r["point"] == "compile":
        print(f"  {r['jam']:16s} {r['triple']:18s} {r['bc_bytes']:6d} B  {r['compile_ms']:8.2f} ms")
    elif r["point"] == "jit_setup":
        print(f"  (once per process: load LLVM, create the JIT: {r['ms']:.1f} ms)")
print("# compiled / machine code, run time per call, median of per-round ratios")
jams = sorted({r["jam"] for r in rows if r["point"] == "run"})
for j in jams:
    rr = [r for r in rows if r["point"] == "run" and r["jam"] == j]
    ratios = [r["compiled_ns"] / r["local_ns"] for r in rr]
    print(f"  {j:16s} local {statistics.median(r['local_ns'] for r in rr):8.2f} ns  "
          f"compiled {statistics.median(r['compiled_ns'] for r in rr):8.2f} ns  "
          f"ratio {statistics.median(ratios):.3f} ({len(ratios)} rounds, "
          f"{min(ratios):.2f}-{max(ratios):.2f})")
PY

shapes="ifunc_lat_local ifunc_lat_portable-cached ifunc_bw_local ifunc_bw_portable-cached"
name=perftest_${tls%%,*}
"$here/builds_compare.sh" "$build" "$build" --rounds "$rounds" --tls "$tls" \
    --shapes "$shapes" >"$out/$name.jsonl" 2>"$work/compare.log" || {
    cat "$work/compare.log" >&2
    exit 1
}
echo "# Portable-Cached / Local, $tls, median of per-round ratios"
python3 "$here/shape_ratios.py" "$out/$name.jsonl" \
    ifunc_lat_portable-cached/ifunc_lat_local ifunc_bw_portable-cached/ifunc_bw_local |
    tee "$out/${name}_ratios.json"
"$here/portable_plot.sh" "$out"
