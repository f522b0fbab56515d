import json,glob,statistics as st,collections
import sys
out=sys.argv[1] if len(sys.argv) > 1 else '/tmp/ab/out'
def load(p):
    r=[]
    for l in open(p):
        l=l.strip()
        if l.startswith('{'):
            try: r.append(json.loads(l))
            except: pass
    return r
rounds=sorted({int(p.split('.')[-2]) for p in glob.glob(out+'/smc.main.*.jsonl')})
print("SMC (smc.sh, posix,self, 100 B), per-round main/base ratio, median over", len(rounds), "rounds")
keys=collections.OrderedDict()
per=collections.defaultdict(list); vals=collections.defaultdict(lambda: {'base':[], 'main':[]})
for r in rounds:
    row={}
    for tree in ('base','main'):
        try: recs=load(f'{out}/smc.{tree}.{r}.jsonl')
        except FileNotFoundError: continue
        for j in recs:
            if j.get('shape') in ('smc_bw','smc_lat'):
                k=(j['shape'],j['members'],j['senders'])
                v=j['msg_rate'] if j['shape']=='smc_bw' else j['lat_p50_us']
                row.setdefault(k,{})[tree]=(v,j.get('puts_per_msg'))
                vals[k][tree].append(v)
                keys[k]=1
    for k,d in row.items():
        if 'base' in d and 'main' in d and d['base'][0]>0:
            per[k].append(d['main'][0]/d['base'][0])
            per[(k,'puts')].append((d['base'][1],d['main'][1]))
for k in keys:
    if not per[k]: continue
    unit='msg/s' if k[0]=='smc_bw' else 'us p50'
    print(f"  {k[0]} N={k[1]} senders={k[2]}: base median {st.median(vals[k]['base']):.4g} {unit}, main {st.median(vals[k]['main']):.4g}, ratio main/base median {st.median(per[k]):.3f} (rounds {len(per[k])}); puts/msg base {st.median([p[0] for p in per[(k,'puts')]]):.3f} main {st.median([p[1] for p in per[(k,'puts')]]):.3f}")
print("Views (views.sh 2 per round)")
vv=collections.defaultdict(lambda: {'base':[], 'main':[]})
for p in glob.glob(out+'/views.*.jsonl'):
    tree=p.split('.')[-3]
    for j in load(p):
        k=(j.get('scenario'),j.get('members'))
        for f in ('detection_ms','wedge_to_view_ms','kill_to_view_ms','request_to_view_ms','joiner_wait_ms'):
            if j.get(f) is not None: vv[(k,f)][tree].append(j[f])
        if 'trimmed' in j: vv[(k,'trimmed')][tree].append(j['trimmed'])
for k in sorted(vv, key=str):
    b,m=vv[k]['base'],vv[k]['main']
    if b and m: print(f"  {k[0][0]} N={k[0][1]} {k[1]}: base {min(b):.3g}-{max(b):.3g} (median {st.median(b):.3g}, n={len(b)}), main {min(m):.3g}-{max(m):.3g} (median {st.median(m):.3g}, n={len(m)})")
print("RDMC cluster (rdmc.sh --members '4 8' --iters 1), ratio to p2p")
rr=collections.defaultdict(lambda: {'base':[], 'main':[]})
for p in glob.glob(out+'/rdmc_cluster.*.jsonl')+glob.glob(out+'/rdmc_shm.*.jsonl'):
    tree=p.split('.')[-3]; kind='cluster' if 'cluster' in p else 'shm'
    for j in load(p):
        k=(kind,j.get('schedule',j.get('kind')),j.get('members'))
        v=j.get('ratio_to_p2p') if kind=='cluster' else j.get('time_to_all_s')
        if v is not None: rr[k][tree].append(v)
for k in sorted(rr, key=str):
    b,m=rr[k]['base'],rr[k]['main']
    if b and m: print(f"  {k}: base median {st.median(b):.3g} (n={len(b)}), main median {st.median(m):.3g} (n={len(m)})")
