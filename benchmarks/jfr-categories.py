#!/usr/bin/env python3
"""Where the Java samples of given threads go, by category of the top frame, from a JFR recording (CaseProfile's):
jfr-categories.py FILE.jfr THREAD[,THREAD...]. Categories: CRC, copies, TLS, socket calls (the JNI side of a system
call), MPA, DDP/RDMAP engine, ours (other), the compare driver, Netty buffers, Netty's channel/pipeline/loop, the JDK.
Also the share of samples with each of our layers anywhere on the stack, and the top frames."""
import collections, re, sys

from jfr_samples import samples

path, names = sys.argv[1], sys.argv[2].split(',')
recorded = list(samples(path))


def category(frame):
    if re.search(r'Crc32c|CRC32C|\.crc|crc32', frame, re.I):
        return 'CRC'
    if re.search(r'copyMemory|arraycopy|setBytes|getBytes|writeBytes|readBytes|copy', frame):
        return 'copies'
    if frame.startswith(('io.netty.handler.ssl', 'io.netty.internal.tcnative', 'sun.security', 'javax.crypto',
                         'com.sun.crypto', 'org.bouncycastle')):
        return 'TLS'
    if re.search(r'channel\.epoll\.(Native|LinuxSocket|Socket)|unix\.(Socket|FileDescriptor)|sun\.nio\.ch\.'
                 r'|uring\.Native', frame):
        return 'socket calls (JNI)'
    if frame.startswith('dev.iwarp.mpa'):
        return 'MPA'
    if frame.startswith(('dev.iwarp.ddp', 'dev.iwarp.rdmap')):
        return 'DDP/RDMAP engine'
    if frame.startswith('dev.iwarp.benchmarks'):
        return 'compare driver'
    if frame.startswith('dev.iwarp'):
        return 'ours, other'
    if frame.startswith('io.netty.buffer'):
        return 'Netty buffers'
    if frame.startswith('io.netty'):
        return 'Netty channel/pipeline/loop'
    return 'JDK'


for name in names:
    n = 0
    top = collections.Counter()
    cats = collections.Counter()
    layers = collections.Counter()
    for thread, frames in recorded:
        if thread != name:
            continue
        n += 1
        top[frames[0]] += 1
        cats[category(frames[0])] += 1
        for layer in set(category(f) for f in frames if f.startswith('dev.iwarp')):
            layers[layer] += 1
    if not n:
        print(f'{name}: no Java samples')
        continue
    print(f'{name}: {n} Java samples')
    print('  top frame by category: ' + ', '.join(f'{k} {100 * v / n:.0f} %' for k, v in cats.most_common()))
    print('  ours on the stack:     ' + ', '.join(f'{k} {100 * v / n:.0f} %' for k, v in layers.most_common()))
    print('  top frames:            ' + '; '.join(f'{".".join(f.split(".")[-2:])} {100 * v / n:.0f} %'
                                                 for f, v in top.most_common(6)))
