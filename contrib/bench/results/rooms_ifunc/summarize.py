#!/usr/bin/env python3
"""Per shape of run.sh's points: each build's best and median (best is the
minimum of a time, the maximum of a rate), then the medians of the per-round
ratios after / before and again / after (the A/A run).

    summarize.py points.r9.jsonl
"""
import json
import statistics
import sys

FIELDS = {"smc_bw": "msg_rate", "smc_lat": "lat_avg_us", "smc_bw_batched": "msg_rate",
          "rdmc_64k": "time_to_all_s", "rdmc_4m": "time_to_all_s"}
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
shapes = list(dict.fromkeys(p["shape"] for p in rows))
print("| shape | unit | best before / after | median before / after | after / before | A/A again / after |")
print("|---|---|---|---|---|---|")
for shape in shapes:
    field = FIELDS.get(shape, "msg_rate" if "_bw_" in shape else "lat_p50_us")
    rate = field == "msg_rate"
    by = {(p["build"], p["round"]): p[field] for p in rows if p["shape"] == shape}
    col = {b: [v for (k, _), v in by.items() if k == b] for b in ("before", "after")}

    def ratio(num, den):
        return statistics.median(by[(num, r)] / by[(den, r)] for (k, r) in by
                                 if k == den and (num, r) in by)
    scale, unit = (1e-6, "M msg/s") if rate else ((1e6, "us") if field.endswith("_s") else (1, "us"))
    best = max if rate else min
    print(f"| {shape} | {unit} | {best(col['before']) * scale:.3f} / {best(col['after']) * scale:.3f} "
          f"| {statistics.median(col['before']) * scale:.3f} / {statistics.median(col['after']) * scale:.3f} "
          f"| {ratio('after', 'before'):.3f} | {ratio('again', 'after'):.3f} |")
