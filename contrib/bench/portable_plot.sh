#!/usr/bin/env bash
#
# The plots of contrib/bench/portable.sh's results in OUT (needs gnuplot):
#   portable_compile.png  each module's first compile, ms, against its size
#   portable_run.png      ns per call: the package's machine code and the
#                         compiled module, same jam and payload (medians)
#   portable_perftest.png Local and Portable-Cached in ucp_ifunc_lat (p50)
#                         and ucp_ifunc_bw, every round
#
#   contrib/bench/portable_plot.sh OUT
#
set -euo pipefail
out=${1:?usage: $0 OUT}
command -v gnuplot >/dev/null || { echo "portable_plot.sh: no gnuplot (apt-get install gnuplot-nox)" >&2; exit 0; }
jit=$(ls "$out"/jit_*.jsonl | head -1)
python3 - "$jit" "$out" <<'PY'
import glob, json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
out = sys.argv[2]
with open(f"{out}/compile.dat", "w") as f:
    for r in rows:
        if r["point"] == "compile":
            f.write(f"{r['jam']} {r['bc_bytes']} {r['compile_ms']}\n")
with open(f"{out}/run.dat", "w") as f:
    for j in sorted({r["jam"] for r in rows if r["point"] == "run"}):
        rr = [r for r in rows if r["point"] == "run" and r["jam"] == j]
        f.write(f"{j} {statistics.median(r['local_ns'] for r in rr)} "
                f"{statistics.median(r['compiled_ns'] for r in rr)}\n")
pts = [json.loads(l) for p in glob.glob(f"{out}/perftest_*.jsonl") for l in open(p)
       if l.startswith("{")]
with open(f"{out}/perftest.dat", "w") as f:
    for shape in ("ifunc_lat_local", "ifunc_lat_portable-cached", "ifunc_bw_local",
                  "ifunc_bw_portable-cached"):
        for p in pts:
            if p["shape"] == shape:
                v = p.get("lat_p50_us", p.get("msg_rate"))
                f.write(f"{shape} {p['round']} {v}\n")
PY
gnuplot <<EOF
set terminal pngcairo size 900,500 noenhanced
set output "$out/portable_compile.png"
set title "First Portable frame: one compile per module (x86_64 host)"
set xlabel "module size, bytes"; set ylabel "compile, ms"; set grid
plot "$out/compile.dat" using 2:3:1 with labels offset 0,1 notitle, "" using 2:3 with points pt 7 title "compile"
set output "$out/portable_run.png"
set title "Run time per call: package machine code vs compiled module (medians)"
set style data histograms; set style fill solid 0.7; set ylabel "ns per call"; set xlabel ""
set xtics rotate by -20
plot "$out/run.dat" using 2:xtic(1) title "machine code (cc -O2)", "" using 3 title "compiled (ORC, host CPU)"
set output "$out/portable_perftest.png"
set title "Local vs Portable-Cached, every round"
set style data points; set xtics norotate; set xlabel "round"
set multiplot layout 1,2
set ylabel "ucp_ifunc_lat p50, us"
plot "< grep '^ifunc_lat_local ' $out/perftest.dat" using 2:3 pt 7 title "Local", \
     "< grep '^ifunc_lat_portable-cached ' $out/perftest.dat" using 2:3 pt 5 title "Portable-Cached"
set ylabel "ucp_ifunc_bw, msg/s"
plot "< grep '^ifunc_bw_local ' $out/perftest.dat" using 2:3 pt 7 title "Local", \
     "< grep '^ifunc_bw_portable-cached ' $out/perftest.dat" using 2:3 pt 5 title "Portable-Cached"
unset multiplot
EOF
rm -f "$out/compile.dat" "$out/run.dat" "$out/perftest.dat"
echo "portable_plot.sh: $out/portable_{compile,run,perftest}.png"
