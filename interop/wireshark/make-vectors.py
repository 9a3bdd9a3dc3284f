#!/usr/bin/env python3
"""Known-answer captures for the IFT and SCTP DDP Lua dissectors (check.sh decodes them).

Writes, into the directory given (default: this script's), classic pcap files built from the
known-answer vectors of the IFT draft digest (AI-1..AI-3, F1..F6) and the SCTP DDP/RDMA draft
digest (the 0xC006 parameter, S1..S6), wrapped in hand-made Ethernet/IPv4/TCP and SCTP headers:

  ift-vectors.pcap   four TCP connections, 0 errors expected:
                     1. port 7176: AI-1, AI-2, then F1..F4 from node A (header+payload CRC), F2 and F3
                        in one segment, F4 split over two segments;
                     2. port 40001 (found by the indication's magic): AI-3 (header CRC only), AI-2, F6;
                     3. port 40002: an indication without CRCs (R only), AI-2, F5;
                     4. port 40003: no indications captured (preferences assume both CRCs), F2.
  ift-corrupt.pcap   AI-1, AI-2, then F2 with one payload octet changed (payload CRC bad), F3 with
                     its header CRC changed (header CRC bad), F2 with another VTag (VTag error).
  sctp-vectors.pcap  association 1 (port 7177): INIT and INIT-ACK with 0xC006 = 4, DATA S1..S5;
                     association 2 (port 30000, found by its INIT): indication 2, DATA S6.

Python standard library only; deterministic output (fixed timestamps).
"""
import os
import struct
import sys

CRC_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    CRC_TABLE.append(c)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def hexblock(text):
    return bytes.fromhex(" ".join(line.split("  ", 1)[1] if "  " in line else line
                                  for line in text.strip().splitlines()))


# draft-williams-iwarp-ift-01 digest §15
AI1 = hexblock("""
0000  52 44 44 50 00 01 00 01  70 00 00 00 1a 2b 00 00
0010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0020  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0030  00 00 00 00 00 00 00 00  00 00 00 00 21 50 96 e3""")
AI2 = hexblock("""
0000  52 44 44 50 00 01 00 01  f0 00 00 00 c3 d4 00 00
0010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0020  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0030  00 00 00 00 00 00 00 00  00 00 00 00 e0 3e 50 f4""")
AI3 = hexblock("""
0000  52 44 44 50 00 01 00 01  26 00 00 00 0f 0f 00 00
0010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0020  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0030  00 00 00 00 00 00 00 00  00 00 00 00 00 5b 9f 83""")
F1 = hexblock("""
0000  00 0e 00 00 c3 d4 c1 40  00 01 a2 00 00 00 7f 3a
0010  5c 00 10 00 17 8d 26 d4  00 00 00 00""")
F2 = hexblock("""
0000  00 12 00 05 c3 d4 41 43  00 00 00 00 00 00 00 00
0010  00 00 00 01 00 00 00 00  a5 75 3e dd 68 65 6c 6c
0020  6f 4c bb 71 9a""")
F3 = hexblock("""
0000  00 0e 00 10 c3 d4 c1 40  00 01 a2 00 00 00 7f 3a
0010  5c 00 10 00 d2 e5 36 38  52 44 4d 41 20 70 61 79
0020  6c 6f 61 64 20 31 36 42  6a 3f f3 d5""")
F4 = hexblock("""
0000  00 12 00 1c c3 d4 41 41  00 00 00 00 00 00 00 01
0010  00 00 00 01 00 00 00 00  06 57 37 23 00 01 a2 00
0020  00 00 7f 3a 5c 00 10 00  00 01 00 00 00 00 b7 00
0030  00 00 7f 3a 5c 20 00 00  e7 9e 4a da""")
F5 = hexblock("""
0000  00 12 00 05 c3 d4 41 43  00 00 00 00 00 00 00 00
0010  00 00 00 01 00 00 00 00  68 65 6c 6c 6f""")
F6 = hexblock("""
0000  00 12 00 05 c3 d4 41 43  00 00 00 00 00 00 00 00
0010  00 00 00 01 00 00 00 00  a5 75 3e dd 68 65 6c 6c
0020  6f""")

for v, want in ((AI1, 0xE3965021), (AI2, 0xF4503EE0), (AI3, 0x839F5B00)):
    assert crc32c(v[:60]) == want == struct.unpack("<I", v[60:])[0]


def indication(flags, vtag):
    body = struct.pack(">IHHIHH", 0x52444450, 1, 1, flags, vtag, 0) + bytes(44)
    return body + struct.pack("<I", crc32c(body))


AI_NO_CRC = indication(0x40000000, 0x1A2B)  # phase 0, R only: frames without CRCs

# draft-stewart-otis-sctp-ddp-rdma-00 digest §14
S = [hexblock(x) for x in ("""
0000  00 00 03 00 00 01 a2 00  00 00 7f 3a 5c 00 10 00
0010  00 00 00 01 c1 40 00 01  a2 00 00 00 7f 3a 5c 00
0020  10 00 52 44 4d 41 20 70  61 79 6c 6f 61 64 20 31
0030  36 42""", """
0000  00 00 00 40 00 00 00 00  00 00 00 00 00 00 00 00
0010  00 00 00 02 41 43 00 00  00 00 00 00 00 00 00 00
0020  00 01 00 00 00 00 68 65  6c 6c 6f""", """
0000  00 00 00 40 00 00 00 00  00 00 00 00 00 00 00 00
0010  00 00 00 03 41 41 00 00  00 00 00 00 00 01 00 00
0020  00 01 00 00 00 00 00 01  a2 00 00 00 7f 3a 5c 00
0030  10 00 00 01 00 00 00 00  b7 00 00 00 7f 3a 5c 20
0040  00 00""", """
0000  00 00 03 40 00 01 a2 00  00 00 7f 3a 5c 00 10 00
0010  00 00 00 04 c1 42 00 01  a2 00 00 00 7f 3a 5c 00
0020  10 00 52 44 4d 41 20 70  61 79 6c 6f 61 64 20 31
0030  36 42""", """
0000  00 00 00 60 00 01 a3 00  00 00 00 00 00 00 00 00
0010  00 00 00 05 41 44 00 01  a3 00 00 00 00 00 00 00
0020  00 02 00 00 00 00 68 65  6c 6c 6f""", """
0000  00 00 02 40 00 00 00 07  00 00 00 00 00 00 04 00
0010  30 31 32 33 34 35 36 37  38 39""")]


class Pcap:
    def __init__(self):
        self.records = []
        self.t = 1_700_000_000_000_000  # microseconds

    def add(self, frame):
        self.t += 1000
        self.records.append(struct.pack("<IIII", self.t // 1_000_000, self.t % 1_000_000,
                                        len(frame), len(frame)) + frame)

    def write(self, path):
        with open(path, "wb") as out:
            out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))  # Ethernet
            out.write(b"".join(self.records))


def ipv4(src, dst, proto, payload):
    def cks(h):
        s = sum(struct.unpack(">10H", h))
        s = (s & 0xFFFF) + (s >> 16)
        s = (s & 0xFFFF) + (s >> 16)
        return ~s & 0xFFFF
    h = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, proto, 0,
                    bytes(src), bytes(dst))
    h = h[:10] + struct.pack(">H", cks(h)) + h[12:]
    eth = bytes.fromhex("020000000002 020000000001 0800")
    return eth + h + payload


A, B = (10, 0, 0, 1), (10, 0, 0, 2)


class Tcp:
    """One TCP connection; seq/ack kept per direction. Checksums left 0 (Wireshark does not check)."""

    def __init__(self, pcap, aport, bport):
        self.pcap, self.aport, self.bport = pcap, aport, bport
        self.seq = {"a": 1000, "b": 5000}
        self.seg("a", b"", 0x02)
        self.seg("b", b"", 0x12)
        self.seg("a", b"", 0x10)

    def seg(self, who, data, flags=0x18):
        other = "b" if who == "a" else "a"
        sp, dp = (self.aport, self.bport) if who == "a" else (self.bport, self.aport)
        src, dst = (A, B) if who == "a" else (B, A)
        ack = self.seq[other] if flags != 0x02 else 0
        hdr = struct.pack(">HHIIBBHHH", sp, dp, self.seq[who], ack, 5 << 4, flags, 65535, 0, 0)
        self.pcap.add(ipv4(src, dst, 6, hdr + data))
        self.seq[who] += len(data) + (1 if flags & 0x03 else 0)


def ift_vectors(path):
    p = Pcap()
    c = Tcp(p, 50000, 7176)
    c.seg("a", AI1)
    c.seg("b", AI2)
    c.seg("a", F1)
    c.seg("a", F2 + F3)
    c.seg("a", F4[:10])
    c.seg("a", F4[10:])
    c = Tcp(p, 50001, 40001)
    c.seg("a", AI3)
    c.seg("b", AI2)
    c.seg("a", F6)
    c = Tcp(p, 50002, 40002)
    c.seg("a", AI_NO_CRC)
    c.seg("b", AI2)
    c.seg("a", F5)
    c = Tcp(p, 50003, 7176)
    c.seg("a", F2)
    p.write(path)


def ift_corrupt(path):
    p = Pcap()
    c = Tcp(p, 50010, 7176)
    c.seg("a", AI1)
    c.seg("b", AI2)
    bad_payload = bytearray(F2)
    bad_payload[0x20] ^= 0x20  # "hellO"
    c.seg("a", bytes(bad_payload))
    bad_header = bytearray(F3)
    bad_header[0x14] ^= 0xFF
    c.seg("a", bytes(bad_header))
    bad_vtag = bytearray(F2)
    bad_vtag[4:6] = b"\xbe\xef"
    bad_vtag[0x18:0x1C] = struct.pack("<I", crc32c(bytes(bad_vtag[:0x18])))
    c.seg("a", bytes(bad_vtag))
    p.write(path)


class Sctp:
    def __init__(self, pcap, aport, bport, indication):
        self.pcap, self.aport, self.bport = pcap, aport, bport
        self.tag = {"a": 0x11111111, "b": 0x22222222}
        self.tsn = {"a": 0x3A5F0001, "b": 0x7B000001}
        param = struct.pack(">HHI", 0xC006, 8, indication)
        init = struct.pack(">IIHHI", self.tag["a"], 65536, 10, 10, self.tsn["a"]) + param
        self.packet("a", 0, [self.chunk(1, 0, init)])
        cookie = struct.pack(">HH", 7, 12) + b"cookie12"
        ack = struct.pack(">IIHHI", self.tag["b"], 65536, 10, 10, self.tsn["b"]) + cookie + param
        self.packet("b", self.tag["a"], [self.chunk(2, 0, ack)])

    @staticmethod
    def chunk(ctype, flags, value):
        c = struct.pack(">BBH", ctype, flags, 4 + len(value)) + value
        return c + bytes(-len(c) % 4)

    def packet(self, who, vtag, chunks):
        sp, dp = (self.aport, self.bport) if who == "a" else (self.bport, self.aport)
        src, dst = (A, B) if who == "a" else (B, A)
        body = struct.pack(">HHII", sp, dp, vtag, 0) + b"".join(chunks)
        body = body[:8] + struct.pack("<I", crc32c(body)) + body[12:]
        self.pcap.add(ipv4(src, dst, 132, body))

    def data(self, who, user_data):
        other = "b" if who == "a" else "a"
        value = struct.pack(">IHHI", self.tsn[who], 0, 0, 0) + user_data
        self.tsn[who] += 1
        self.packet(who, self.tag[other], [self.chunk(0, 0x07, value)])


def sctp_vectors(path):
    p = Pcap()
    a = Sctp(p, 5000, 7177, 4)
    for s in S[:5]:
        a.data("a", s)
    b = Sctp(p, 5001, 30000, 2)
    b.data("a", S[5])
    p.write(path)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    ift_vectors(os.path.join(out, "ift-vectors.pcap"))
    ift_corrupt(os.path.join(out, "ift-corrupt.pcap"))
    sctp_vectors(os.path.join(out, "sctp-vectors.pcap"))
