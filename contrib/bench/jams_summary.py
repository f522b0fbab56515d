#!/usr/bin/env python3
"""Summary of contrib/bench/jams.sh: per-round ratios of points measured in
the same round, and their medians.

    jams_summary.py JSONL OUTDIR   (writes OUTDIR/ratios.dat)
"""
import sys

from bench_rounds import Rounds, med

data = Rounds(sys.argv[1])
rows, rounds, by = data.rows, data.rounds, data.by
per_round = data.per_round
JAMS = ['local', 'injected', 'cached']
MODES = ['urgent', 'batched']

lines = [f"# {len(rounds)} rounds; medians of per-round values (ratios: same round)"]
cols = []
for mode in MODES:
    raw = med(per_round(lambda g: g(f'raw_{mode}')['msg_rate']))
    touch = med(per_round(lambda g: g(f'touch_{mode}')['msg_rate']))
    lines.append(f"raw SMC {mode}: {raw / 1e6:.2f} M msg/s delivered per member "
                 f"({touch / 1e6:.2f} M reading every message)")
    for jam in JAMS:
        ratio = per_round(lambda g: g(f'{jam}_{mode}')['msg_rate'] / g(f'raw_{mode}')['msg_rate'])
        rate = med(per_round(lambda g: g(f'{jam}_{mode}')['msg_rate']))
        vals = [v for _, v in ratio]
        span = f"[{min(vals):.2f}..{max(vals):.2f}]" if vals else ""
        verdict = "met" if med(ratio) >= 0.8 else f"MISSED by {0.8 / med(ratio):.2f}x"
        slot = next((r['slot_bytes'] for r in rows if r['point'] == f'{jam}_{mode}'), 0)
        touched = per_round(lambda g: g(f'{jam}_{mode}')['msg_rate'] /
                            g(f'touch_{mode}')['msg_rate'])
        lines.append(f"  {jam:8s} {mode}: {rate / 1e6:.2f} M jams/s, {med(ratio):.2f} of raw "
                     f"{span} (goal >= 0.8: {verdict}), {med(touched):.2f} of raw reading "
                     f"the data; slot {slot} B")
        cols.append((f"{jam}_{mode}", dict(ratio)))
put = med(per_round(lambda g: g('put_bw')['msg_rate']))
lines.append(f"ucx_perftest ucp_put_bw 100 B (pinned pair): {put / 1e6:.1f} M msg/s; "
             f"local urgent jams / put_bw: "
             f"{med(per_round(lambda g: g('local_urgent')['msg_rate'] / g('put_bw')['msg_rate'])):.3f}")
raw_lat = med(per_round(lambda g: g('raw_lat')['lat_p50_us']))
lines.append(f"latency, one at a time (p50): raw message send -> delivered at every member "
             f"{raw_lat:.2f} us")
for jam in JAMS:
    p50 = med(per_round(lambda g: g(f'{jam}_lat')['lat_p50_us']))
    avg = med(per_round(lambda g: g(f'{jam}_lat')['lat_avg_us']))
    p999 = med(per_round(lambda g: g(f'{jam}_lat')['lat_p999_us']))
    lines.append(f"  {jam:8s} jam send -> executed at every member (the sender's flush(stable)): "
                 f"p50 {p50:.2f} us, avg {avg:.2f}, p99.9 {p999:.2f}")
print("\n".join(lines))

with open(f"{sys.argv[2]}/ratios.dat", "w") as f:
    f.write("round " + " ".join(name for name, _ in cols) + "\n")
    for rd in rounds:
        f.write(f"{rd} " + " ".join(f"{vals.get(rd, float('nan')):.4f}" for _, vals in cols) + "\n")
