import csv, sys, statistics as st, re
rows=list(csv.DictReader(open(sys.argv[1])))
def key(r):
    p=re.search(r'program=([^;]*)',r['params']).group(1); m=re.search(r'memory=([^;]*)',r['params']).group(1)
    return (p, r['runtime'], m)
# rounds: order of appearance; each (p,rt,m,t) appears once per round
from collections import defaultdict
seen=defaultdict(list)
for r in rows:
    seen[key(r)+(int(r['threads']),)].append(r)
progs=sorted(set(k[0] for k in seen))
for p in progs:
    print('##', p)
    gil2=[float(x['ops_per_s']) for x in seen[(p,'gil','refcount',2)]]
    for (pp,rt,m,t),v in sorted(seen.items()):
        if pp!=p or t!=1: continue
        one=[float(x['ops_per_s']) for x in v]; two=[float(x['ops_per_s']) for x in seen[(p,rt,m,2)]]
        rat=[b/a for a,b in zip(one,two)]
        vg=[b/g for b,g in zip(two,gil2)]
        r2=seen[(p,rt,m,2)]
        ab=st.median([float(x['aborts'])/max(1,float(x['commits'])) for x in r2])
        print(f"{rt:6s} {m:9s} 1T {st.median(one)/1e6:7.1f}M  2T {st.median(two)/1e6:7.1f}M  2T/1T med {st.median(rat):.2f} [{min(rat):.2f}-{max(rat):.2f}]  2T vs gil-refcount-2T {st.median(vg):.2f}  aborts/commit {ab:.3f}")
