#!/usr/bin/env python3
"""Execution-sample shares per thread from `jfr print --events jdk.ExecutionSample FILE`: self (top frame) and
inclusive (any frame) shares of the top methods, per thread whose name matches argv[2] (regex)."""
import re, sys, collections
from jfr_samples import samples
path, pat = sys.argv[1], re.compile(sys.argv[2] if len(sys.argv) > 2 else '.')
top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
threads = collections.defaultdict(lambda: [0, collections.Counter(), collections.Counter()])
for thread, frames in samples(path):
    if not pat.search(thread):
        continue
    t = threads[thread]
    t[0] += 1
    t[1][frames[0]] += 1
    for f in set(frames):
        t[2][f] += 1
for name, (n, self_, incl) in sorted(threads.items()):
    print(f'== {name}: {n} samples')
    print('  self:')
    for f, c in self_.most_common(top):
        print(f'    {100.0 * c / n:5.1f} %  {f}')
    print('  inclusive:')
    for f, c in incl.most_common(top + 15):
        print(f'    {100.0 * c / n:5.1f} %  {f}')
