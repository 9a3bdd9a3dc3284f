#!/usr/bin/env bash
# Live SCTP: boots the sctp-vm guest once (real kernel SCTP, libsctp.so.1, a JRE 17;
# ../shared/interop/sctp-vm) and runs our iwarp-server.jar there over guest loopback:
#   1. serve --wire sctp, ping over IPv4 and IPv6 (client bound to one address), brief benches (send, and
#      write and read against the target serve advertises in its first Send);
#   2. the indication combinations: both 4 (enabled), server without indication, client without
#      indication, client RDMA_ONLY (refused by our ULP: I2) -- each must fail cleanly;
#   3. a tcpdump of the first association: decoded here (no Python in the guest) and asserted to
#      carry parameter 0xC006 with value 4 in both INIT and INIT-ACK; then decoded by tshark with
#      interop/wireshark/sctp_ddp.lua: every DATA chunk's placement extension, nothing malformed;
#   4. SctpOperationsCheck (iwarp-server's test classes): every RDMA operation at every size over
#      real SCTP, every octet compared.
# Usage (root): interop/sctp-guest.sh iwarp-server/target/iwarp-server.jar   (.ci/run: timeout 840)
set -euo pipefail
JAR=${1:?usage: $0 iwarp-server.jar [TEST_CLASSES]}
# iwarp-server's compiled test classes: dev.iwarp.server.SctpOperationsCheck (every RDMA operation)
CLASSES=${2:-$(dirname "$JAR")/test-classes}
# the guest command's time limit in seconds (boot not included; .ci/run's timeout leaves room for it): the guest
# is emulated: SctpOperationsCheck alone took 240 s at a load average of 20, over 400 s at 35-40 (2 shared cores)
LIMIT=${SCTP_GUEST_TIMEOUT:-600}
HERE=$(cd "$(dirname "$0")" && pwd)
VM=${SCTP_VM:-$HERE/../../shared/interop/sctp-vm}
[[ -d $VM ]] || VM=/work/shared/interop/sctp-vm
bash "$VM/setup.sh" >/dev/null
SHARE=$(mktemp -d)
trap 'rm -rf "$SHARE"' EXIT
cp "$JAR" "$SHARE/iwarp-server.jar"
mkdir -p "$SHARE/classes/dev/iwarp/server"
cp "$CLASSES"/dev/iwarp/server/SctpOperationsCheck*.class "$SHARE/classes/dev/iwarp/server/"
cat > "$SHARE/guest.sh" <<'GUEST'
set -u
START=$(date +%s) LIMIT=$(cat /host/limit)
cp /host/iwarp-server.jar /tmp/ && mkdir -p /host/logs && cd /host/logs
J="java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -jar /tmp/iwarp-server.jar"
fail=0
# the guest is emulated and its host may be loaded: a JVM in it can take seconds between steps that take
# milliseconds on a host, so serve's first-octet guard (2 s), its message deadline (10 s) and the clients' per-step
# timeouts (10 s) get a minute
SLOW="--first-octet-timeout 60000 --message-deadline 60000" WAIT="--timeout 60000"
check() { if [ "$1" = "$2" ]; then echo "OK   $3 [at $(( $(date +%s) - START )) s]"; else echo "FAIL $3 (exit $1, expected $2) [at $(( $(date +%s) - START )) s]"; fail=1; fi; }
tcpdump -U -i lo -n -s 0 -c 400 -w /host/assoc.pcap sctp 2>/dev/null &
TD=$!
$J serve --wire sctp --address 0.0.0.0 $SLOW > serve.log 2>&1 &
SERVE=$!
for i in $(seq 1 60); do grep -q "listening" serve.log && break; sleep 1; done
echo "     serve listening [at $(( $(date +%s) - START )) s]"
t0=$(date +%s)
$J ping --wire sctp --bind 127.0.0.1 $WAIT -C 3 -S 1000 -v -V 127.0.0.1 > ping4.log 2>&1; check $? 0 "ping IPv4 over SCTP ($(( $(date +%s) - t0 )) s)"
sleep 1; kill $TD 2>/dev/null
t0=$(date +%s)
$J ping --wire sctp --bind ::1 $WAIT -C 3 -S 60000 -v -V '[::1]' > ping6.log 2>&1; check $? 0 "ping IPv6 over SCTP, 60000-octet pings ($(( $(date +%s) - t0 )) s)"
$J bench --wire sctp --bind 127.0.0.1 $WAIT --op send --size 1024 --iterations 300 127.0.0.1 > bench.log 2>&1; check $? 0 "bench send 1 KiB x 300"
grep -m4 -iE "MB/s|ops|latency|p50" bench.log
# the adaptation carries no private data: serve's target advertisement is its first Send, as over IFT
for op in write read; do
  $J bench --wire sctp --bind 127.0.0.1 $WAIT --op $op --size 4096 --iterations 100 --warmup 0 --verify 127.0.0.1 > bench-$op.log 2>&1
  check $? 0 "bench $op 4 KiB x 100, every octet verified (serve's advertised target region)"
done
$J ping --wire sctp --bind 127.0.0.1 --sctp-local-indication 0 -C 1 127.0.0.1 > noind.log 2>&1; check $? 1 "client without indication: refused"
$J ping --wire sctp --bind 127.0.0.1 --sctp-local-indication 3 -C 1 127.0.0.1 > rdmaonly.log 2>&1; check $? 1 "client indicating RDMA_ONLY: refused (I2)"
kill $SERVE; wait $SERVE 2>/dev/null
$J serve --wire sctp --port 7177 --sctp-local-indication 0 > serve0.log 2>&1 &
SERVE=$!
for i in $(seq 1 60); do grep -q "listening" serve0.log && break; sleep 1; done
$J ping --wire sctp --bind 127.0.0.1 -C 1 127.0.0.1:7177 > srv0.log 2>&1; check $? 1 "server without indication: disabled, refused"
kill $SERVE; wait $SERVE 2>/dev/null
# 4. every RDMA operation at every size over real SCTP (two stacks in one JVM, guest loopback)
cp -r /host/classes /tmp/ops
t0=$(date +%s)
java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 --add-opens jdk.sctp/sun.nio.ch.sctp=ALL-UNNAMED \
    -cp /tmp/iwarp-server.jar:/tmp/ops dev.iwarp.server.SctpOperationsCheck > ops.log 2>&1 &
OPS=$!
# stop it (thread dump first: the jlink JRE has no jstack, SIGQUIT prints one to ops.log) with time left
# to report, before the guest's own timeout ends everything silently
while kill -0 $OPS 2>/dev/null && [ $(( $(date +%s) - START )) -lt $(( LIMIT - 15 )) ]; do sleep 1; done
if kill -0 $OPS 2>/dev/null; then
  echo "SctpOperationsCheck still running after $(( $(date +%s) - t0 )) s: thread dump in ops.log, stopped"
  kill -3 $OPS; sleep 3; kill $OPS
fi
wait $OPS
check $? 0 "every RDMA operation over SCTP at 0, 1, MULPDU-1..+1, 1 MiB, 16 MiB ($(( $(date +%s) - t0 )) s)"
grep -E "^(OK|FAIL) " ops.log
for f in ping4 ping6 noind rdmaonly srv0; do echo "--- $f"; tail -3 $f.log; done
echo "guest-result $fail"
GUEST
start=$(date +%s)
echo "$LIMIT" > "$SHARE/limit"
OUT=$(bash "$VM/run.sh" -q --share "$SHARE" --timeout "$LIMIT" -- 'bash /host/guest.sh' 2>&1) || true
echo "$OUT"
echo "guest wall time: $(( $(date +%s) - start )) s"
if ! grep -q "guest-result 0" <<<"$OUT"; then
  for f in "$SHARE"/logs/*.log; do
    [[ $f == */ops.log ]] && continue
    echo "--- $(basename "$f")"; { grep -m3 -B2 -A6 "Exception" "$f" || true; } | sed -n 1,20p; tail -8 "$f"
  done
  # SctpOperationsCheck's whole output: where it stopped, and the thread dump if it was stopped
  [[ -f $SHARE/logs/ops.log ]] && { echo "--- ops.log (whole)"; cat "$SHARE/logs/ops.log"; }
  echo "sctp-guest: FAILED in the guest" >&2
  exit 1
fi
# INIT / INIT-ACK of the first association: parameter 0xC006 = 4 both ways
python3 - "$SHARE/assoc.pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
le = data[:4] == b'\xd4\xc3\xb2\xa1'
E = '<' if le else '>'
linktype = struct.unpack(E + 'I', data[20:24])[0]
off, seen = 24, {}
while off + 16 <= len(data):
    _, _, incl, _ = struct.unpack(E + 'IIII', data[off:off + 16]); pkt = data[off + 16:off + 16 + incl]; off += 16 + incl
    l2 = 14 if linktype == 1 else 16 if linktype == 113 else 4 if linktype == 0 else 0
    ip = pkt[l2:]
    v = ip[0] >> 4
    sctp = ip[(ip[0] & 15) * 4:] if v == 4 else ip[40:]
    p = 12
    while p + 4 <= len(sctp):
        ctype, _, clen = struct.unpack('>BBH', sctp[p:p + 4])
        if ctype in (1, 2):
            name = 'INIT' if ctype == 1 else 'INIT-ACK'
            q, end = p + 20, p + clen
            while q + 4 <= end:
                ptype, plen = struct.unpack('>HH', sctp[q:q + 4])
                if ptype == 0xC006:
                    val = struct.unpack('>I', sctp[q + 4:q + 8])[0]
                    print('%-8s Adaptation Layer Indication (0xc006) length %d value 0x%08x: %s' % (
                        name, plen, val, sctp[q:q + plen].hex(' ')))
                    seen.setdefault(name, val)
                q += (plen + 3) & ~3
        p += (clen + 3) & ~3
ok = seen.get('INIT') == 4 and seen.get('INIT-ACK') == 4
print('INIT and INIT-ACK carry 0xC006 = 4:', 'yes' if ok else 'NO (%s)' % seen)
sys.exit(0 if ok else 1)
PY
# the same capture through Wireshark with our dissector (interop/wireshark/README.md)
bash "$HERE/wireshark/check.sh" sctp "$SHARE/assoc.pcap"
