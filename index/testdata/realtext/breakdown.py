# breakdown.py PORT DOCS: MEMORY USAGE of a sample of each key kind of a
# neardup namespace (band tables, passage table, records m/f/v/k/s, ids i,
# I-Match x, content e), scaled to the kind's key count, per document.
import subprocess, sys, random, re, collections
port=sys.argv[1]
def cli(*a): return subprocess.run(['redis-cli','-p',port,*a],capture_output=True,text=True).stdout
keys=subprocess.run(['redis-cli','-p',port,'--scan'],capture_output=True).stdout.split(b'\n')
keys=[k for k in keys if k]
kinds=collections.defaultdict(list)
for k in keys:
    m=re.match(rb'.*\}([a-z])(\d*):?(\d*)',k)
    kind=m.group(1).decode() if m else '?'
    if kind=='b':
        t=int(m.group(3)) if m.group(3) else -1
        kind='b-band' if t<30 else 'b-passage'
    kinds[kind].append(k)
random.seed(1)
tot=0
docs=int(sys.argv[2])
for kind,ks in sorted(kinds.items()):
    s=random.sample(ks,min(300,len(ks)))
    p=subprocess.run(['redis-cli','-p',port],input=b''.join(b'MEMORY USAGE '+k+b' SAMPLES 0\n' for k in s),capture_output=True).stdout.split()
    mu=sum(int(x) for x in p)/len(s)*len(ks)
    tot+=mu
    print(f"{kind:10s} keys={len(ks):8d} bytes/doc={mu/docs:8.0f}")
print("total sampled bytes/doc", round(tot/docs))
