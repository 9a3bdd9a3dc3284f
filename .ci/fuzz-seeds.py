#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from the siw captures (../shared/testdata/siw-pcap) and the
IFT draft's vectors: run once by hand when a target's input layout changes (see .ci/fuzz), then
commit the files. Each seed is the target's configuration octets followed by real peer octets.
VI/TCP has no capture: its seeds (VitcpFuzzTestInputs) are a ConnectRequest, a Send and an RDMA
Write as VitcpCodec encodes them in each CRC mode, with and without trailers; this script leaves them."""
import hashlib, os, struct, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PCAPS = os.path.join(ROOT, '..', 'shared', 'testdata', 'siw-pcap')
REQ_KEY, REP_KEY = b'MPA ID Req Frame', b'MPA ID Rep Frame'
MAX_SEED = 2048


def tcp_streams(path):
    """{(src, sport, dst, dport): payload octets in sequence order} of an Ethernet/IPv4 pcap."""
    data = open(path, 'rb').read()
    off, segs = 24, {}
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack('<IIII', data[off:off + 16])
        pkt, off = data[off + 16:off + 16 + incl], off + 16 + incl
        if len(pkt) < 34 or pkt[12:14] != b'\x08\x00' or pkt[23] != 6:
            continue
        ihl = (pkt[14] & 15) * 4
        ip_len = struct.unpack('>H', pkt[16:18])[0]
        tcp = pkt[14 + ihl:14 + ip_len]
        sport, dport, seq = struct.unpack('>HHI', tcp[:8])
        payload = tcp[(tcp[12] >> 4) * 4:]
        if payload:
            segs.setdefault((pkt[26:30], sport, pkt[30:34], dport), {}).setdefault(seq, payload)
    streams = {}
    for key, by_seq in segs.items():
        out, nxt = b'', None
        for seq in sorted(by_seq):
            p = by_seq[seq]
            if nxt is not None and seq < nxt:
                p = p[nxt - seq:]
            out += p
            nxt = seq + len(by_seq[seq]) if nxt is None or seq + len(by_seq[seq]) > nxt else nxt
        streams[key] = out
    return streams


def startup_frame_length(s):
    return 20 + struct.unpack('>H', s[18:20])[0]


def fpdus(s, crc):
    """ULPDUs of an MPA FPDU stream without markers."""
    out, i = [], 0
    while i + 2 <= len(s):
        n = struct.unpack('>H', s[i:i + 2])[0]
        wire = 2 + n + (-(2 + n) % 4) + 4
        if i + wire > len(s):
            break
        out.append(s[i + 2:i + 2 + n])
        i += wire
    return out


def write(target_dir, name, octets):
    os.makedirs(target_dir, exist_ok=True)
    with open(os.path.join(target_dir, name), 'wb') as f:
        f.write(octets[:MAX_SEED])


def res(module, package, cls, method):
    return os.path.join(ROOT, module, 'src', 'test', 'resources', *package.split('.'), cls + 'Inputs', method)


def records(ulpdus, patch):
    out = b''
    for u in ulpdus:
        if len(u) <= 255:
            out += bytes([len(u), patch if u and u[0] & 0x80 else 0]) + u
    return out


def main():
    mpa_startup = res('mpa-codec', 'dev.iwarp.mpa', 'MpaStartupFuzzTest', 'startup')
    mpa_framer = res('mpa-codec', 'dev.iwarp.mpa', 'MpaFramerFuzzTest', 'framer')
    ddp = res('ddp-codec', 'dev.iwarp.ddp', 'DdpFuzzTest', 'codecAndPlacement')
    rdmap = res('rdmap-codec', 'dev.iwarp.rdmap.engine', 'RdmapFuzzTest', 'receive')
    for name in sorted(os.listdir(PCAPS)):
        if not name.endswith('.pcap'):
            continue
        base = name[:-5]
        for key, s in tcp_streams(os.path.join(PCAPS, name)).items():
            if s.startswith(REQ_KEY):
                role_cfg, who = 0x00, 'to-responder'   # the siw Initiator's octets feed our Responder
            elif s.startswith(REP_KEY):
                role_cfg, who = 0x01, 'to-initiator'   # the siw Responder's octets feed our Initiator
            else:
                write(mpa_startup, '%s-garbage' % base, bytes([0x00, 0, 255]) + s)
                continue
            flags, rev = s[16], s[17]
            crc, markers = bool(flags & 0x40), bool(flags & 0x80)
            rev_bits = {0: 1, 1: 2, 2: 0}.get(rev, 0) << 5
            p2p = 0x08 if rev == 2 and len(s) >= 24 and (s[20] & 0x80) else 0
            cfg = role_cfg | (0x02 if crc else 0) | (0x04 if markers else 0) | rev_bits | p2p | 0x80
            tag = '%s-%s' % (base, who)
            write(mpa_startup, tag, bytes([cfg, 0, 255]) + s)
            write(mpa_startup, tag + '-split7', bytes([cfg, 7, 255]) + s)
            rest = s[startup_frame_length(s):]
            if not rest or markers:
                continue
            write(mpa_framer, tag, bytes([0x01 if crc else 0x00, 0, 0, 0]) + rest)
            ulpdus = fpdus(rest, crc)
            write(ddp, tag, bytes([64]) + records(ulpdus, 0x01))
            write(rdmap, tag, bytes([role_cfg | 0x08, 64]) + records(ulpdus, 0x01))
    # built streams: ULPDUs crossing marker positions, CRC and markers on
    big = bytes([0x80]) + bytes(range(256)) * 2
    write(mpa_framer, 'built-crc-markers', bytes([0x17, 0, 0, 0]) + big + bytes([3, 1, 2, 3, 4] + [0] * 8) + big)
    write(mpa_framer, 'built-crc-markers-corrupt', bytes([0x17, 5, 0, 1, 0x02, 0x10, 0x40]) + big)
    write(mpa_framer, 'built-plain', bytes([0x10, 0, 0, 0, 2]) + bytes(8))

    ift_adaption = res('ift-codec', 'dev.iwarp.ift', 'IftAdaptionFuzzTest', 'adaption')
    ift_framer = res('ift-codec', 'dev.iwarp.ift', 'IftFramerFuzzTest', 'framer')
    v = ift_vectors()
    # node B, sending and checking both CRCs: AI-1 from node A, then frames F1-F4
    write(ift_adaption, 'node-b-ai1-frames', bytes([0x1E, 0]) + v['AI1'] + v['F1'] + v['F2'] + v['F3'] + v['F4'])
    write(ift_adaption, 'node-b-ai1-split5', bytes([0x1E, 5]) + v['AI1'] + v['F2'])
    write(ift_adaption, 'node-a-ai2', bytes([0x1F, 0]) + v['AI2'])
    write(ift_adaption, 'node-b-ai3-ddp-mode', bytes([0x9E, 0]) + v['AI3'])
    write(ift_framer, 'f1-f4-both-crcs', bytes([0x0F, 0, 0]) + v['F1'] + v['F2'] + v['F3'] + v['F4'])
    write(ift_framer, 'f5-no-crcs', bytes([0x00, 0, 0]) + v['F5'])
    write(ift_framer, 'f6-header-crc', bytes([0x05, 3, 0]) + v['F6'])
    write(ift_framer, 'built-both-crcs', bytes([0x1F, 0, 0, 18]) + bytes([0x41, 0x43] + [0] * 16)
          + bytes([20, 0xC1, 0x40] + [0] * 18))


def ift_vectors():
    """AI-1..AI-3 and F1-F6 as IftVectors.java spells them."""
    src = open(os.path.join(ROOT, 'ift-codec', 'src', 'test', 'java', 'dev', 'iwarp', 'ift', 'IftVectors.java')).read()
    out = {}
    for name in ['AI1', 'AI2', 'AI3', 'F1', 'F2', 'F3', 'F4', 'F5', 'F6']:
        start = src.index('static final byte[] %s = Hex.parse(' % name)
        body = src[start:src.index(');', start)]
        hexes = ''.join(part for part in body.split('"')[1::2])
        out[name] = bytes.fromhex(hexes.replace(' ', ''))
    return out


if __name__ == '__main__':
    sys.exit(main())
