# Live heap per connection: (class histogram while held - before) / held connections, largest first.
# usage: histogram-diff.py BEFORE AFTER HELD
import sys,re
def load(f):
    d={}
    for l in open(f):
        m=re.match(r'\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)',l)
        if m: d[m.group(3)]=(int(m.group(1)),int(m.group(2)))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2]); n=int(sys.argv[3])
rows=[(k,(b[k][0]-a.get(k,(0,0))[0])/n,(b[k][1]-a.get(k,(0,0))[1])/n) for k in b]
rows.sort(key=lambda r:-r[2])
ti=sum(r[1] for r in rows); tb=sum(r[2] for r in rows)
print(f"live heap per connection: {ti:.1f} objects, {tb:.0f} B")
for k,i,bb in rows[:25]: print(f"{i:8.2f} {bb:8.1f} B  {k}")
