#!/usr/bin/env python3
"""Summary of contrib/bench/smc_targets.sh: per-round values and ratios of
points measured in the same round, their medians, and each target met or
missed (by how much).

    smc_targets_summary.py JSONL OUTDIR   (writes OUTDIR/ratios.dat)
"""
import sys

from bench_rounds import Rounds, med

FLUSH_US = 50.0   # UCX_TC_SMC_FLUSH_US default: the T of target 4
PUT_MIB = 1048576  # ucx_perftest's MB/s is MiB/s

data = Rounds(sys.argv[1])
rows, rounds, by = data.rows, data.rounds, data.by
per_round = data.per_round


def rate(p):
    return p['msg_rate']


lines = []


def report(name, vals, target=None, higher=True, unit=''):
    m = med(vals)
    spread = f"[{min(v for _, v in vals):.3g} .. {max(v for _, v in vals):.3g}]" if vals else ''
    verdict = ''
    if target is not None and vals:
        ok = m >= target if higher else m <= target
        gap = (target / m if higher else m / target) if m else float('inf')
        verdict = 'met' if ok else f'MISSED by {gap:.2f}x'
        verdict = f"  target {'>=' if higher else '<='} {target:.3g}: {verdict}"
    lines.append(f"{name:58s} {m:10.4g}{unit} {spread}{verdict}")


ratios = {}
for n, where in ((3, 'inproc'), (5, 'inproc'), (3, 'procs'), (5, 'procs')):
    key = f'n{n}_{where}'
    ratios[key] = per_round(lambda g: rate(g(f'{key}_batched')) / rate(g(f'{key}_urgent')))
    report(f"1/2. batched / urgent, N={n}, {'one process' if where == 'inproc' else f'{n} processes'}",
           ratios[key], 10)
for n, where in ((3, 'inproc'), (5, 'inproc'), (3, 'procs'), (5, 'procs')):
    key = f'n{n}_{where}'
    report(f"     batched msg/s, N={n}, {where}", per_round(lambda g: rate(g(f'{key}_batched'))))
    report(f"     urgent msg/s, N={n}, {where}", per_round(lambda g: rate(g(f'{key}_urgent'))))

report("3. 10 KB batched bytes/member / ucp_put_bw(batch bytes)",
       per_round(lambda g: rate(g('kb10_procs_batched')) * 10000 /
                 (g('put_bw_batch')['MB/s'] * PUT_MIB)), 0.5)
report("     10 KB batched, delivered GB/s per member",
       per_round(lambda g: rate(g('kb10_procs_batched')) * 10000 / 1e9))
report("     ucp_put_bw at the batch's put size, GB/s",
       per_round(lambda g: g('put_bw_batch')['MB/s'] * PUT_MIB / 1e9))
report("     B_eff of the 10 KB run", per_round(lambda g: g('kb10_procs_batched')['batch_avg']))

report(f"4. low load, N=3: batched p50 - urgent p50 (us), T={FLUSH_US:.0f}",
       per_round(lambda g: g('lat_batched')['lat_p50_us'] - g('lat_urgent')['lat_p50_us']),
       FLUSH_US, higher=False)
report("     urgent p50 (us)", per_round(lambda g: g('lat_urgent')['lat_p50_us']))
report("     batched p50 (us)", per_round(lambda g: g('lat_batched')['lat_p50_us']))

for n in (3, 5):
    pt = f'n{n}_inproc_batched'
    report(f"5. puts/msg over 1.2 (N^2+N-2)/B_eff, N={n}",
           per_round(lambda g: g(pt)['puts_per_msg'] /
                     (1.2 * (n * n + n - 2) / g(pt)['batch_avg'])), 1.0, higher=False)

report("shards: 64 idle groups + 1 active / 1 group alone",
       per_round(lambda g: rate(g('groups_64_idle')) / rate(g('groups_1'))), 0.9)
report("shards: 8 active groups together / 1 group",
       per_round(lambda g: rate(g('groups_8_active')) / rate(g('groups_1'))), 0.8)
report("span delivery / per-message delivery, N=3 batched",
       per_round(lambda g: rate(g('n3_inproc_batched')) / rate(g('n3_inproc_batched_per_message'))))
report("     groups_1 (the shards' reference), msg/s", per_round(lambda g: rate(g('groups_1'))))
for t in (1, 2, 4):
    report(f"threaded senders T={t} / engine-thread sender, N=3 batched",
           per_round(lambda g: rate(g(f'threads_{t}')) / rate(g('n3_inproc_batched'))))
    report(f"     threaded senders T={t}, msg/s", per_round(lambda g: rate(g(f'threads_{t}'))))
report("ucx_perftest ucp_smc_bw batched / urgent (2 sides, pinned)",
       per_round(lambda g: rate(g('perftest_smc_bw_batched')) / rate(g('perftest_smc_bw_urgent'))))
for mode in ('urgent', 'batched'):
    report(f"     ucp_smc_bw {mode}, msg/s", per_round(lambda g: rate(g(f'perftest_smc_bw_{mode}'))))
    report(f"     ucp_smc_lat {mode}, p50 us (half round trip)",
           per_round(lambda g: g(f'perftest_smc_lat_{mode}')['lat_p50_us']))
report("     ucp_put_bw 100 B, msg/s", per_round(lambda g: rate(g('perftest_put_bw_100'))))

print(f"# {len(rounds)} rounds; medians of per-round values [min .. max]")
print("\n".join(lines))

with open(sys.argv[2] + '/ratios.dat', 'w') as f:
    for rd in rounds:
        vals = []
        for key in ('n3_inproc', 'n5_inproc', 'n3_procs', 'n5_procs'):
            v = dict(ratios[key]).get(rd)
            vals.append(f"{v:.4f}" if v is not None else "NaN")
        f.write(f"{rd} {' '.join(vals)}\n")
