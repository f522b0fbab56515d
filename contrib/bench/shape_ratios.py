#!/usr/bin/env python3
"""Per-round ratios between shapes of one run of builds_compare.sh.

builds_compare.sh A A --shapes "S1 S2 ..." measures every shape of one tree
twice per round (A B A B ...), interleaved; this takes its JSON lines and, for
each pair NUM/DEN given, prints the median over rounds of the per-round ratio
of the two shapes' values (each round's value: the mean of its two points).
Latency shapes compare p50s, bandwidth shapes message rates.

    shape_ratios.py points.jsonl ifunc_lat_public/ifunc_lat_local ...
"""
import json
import statistics
import sys
from collections import defaultdict


def value(row):
    return row.get("lat_p50_us", row.get("msg_rate"))


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
    per = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if value(r) is not None:
            per[r["shape"]][r["round"]].append(value(r))
    for pair in sys.argv[2:]:
        num, den = pair.split("/")
        rounds = sorted(set(per[num]) & set(per[den]))
        ratios = [statistics.mean(per[num][r]) / statistics.mean(per[den][r]) for r in rounds]
        if not ratios:
            print(f"{pair}: no common rounds")
            continue
        print(json.dumps({"ratio": pair, "rounds": len(ratios),
                          "median": round(statistics.median(ratios), 3),
                          "min": round(min(ratios), 3), "max": round(max(ratios), 3),
                          "num_median": statistics.median(v for r in rounds for v in per[num][r]),
                          "den_median": statistics.median(v for r in rounds for v in per[den][r])}))


if __name__ == "__main__":
    main()
