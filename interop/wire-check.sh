#!/usr/bin/env bash
# wire-check.sh - our iWARP traffic, captured on lo and decoded by Wireshark's iwarp_mpa and
# iwarp_ddp_rdmap dissectors (tshark), held against what we meant to send.
#
# Usage: interop/wire-check.sh [JAR [TEST_CLASSES]]
#   JAR           iwarp-server.jar (default iwarp-server/target/iwarp-server.jar)
#   TEST_CLASSES  iwarp-server's compiled test classes, holding dev.iwarp.server.WireTraffic
#                 (default iwarp-server/target/test-classes); build both first (mvn verify or package)
# Environment: WIRE_CHECK_PORT (first of the 20 server ports, default 27400),
#              WIRE_CHECK_DIR (keep the captures, expectations and logs there; default a temp dir)
# Needs root (or dumpcap's capabilities) to capture on lo; installs tshark with apt-get when missing.
# Prints a matrix (one row per variant and message type) and "N passed, M failed"; exit 1 on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
jar=${1:-$root/iwarp-server/target/iwarp-server.jar}
classes=${2:-$root/iwarp-server/target/test-classes}
port=${WIRE_CHECK_PORT:-27400}
[ -f "$jar" ] || { echo "wire-check: no jar at $jar (build first: mvn -B package)" >&2; exit 2; }
[ -f "$classes/dev/iwarp/server/WireTraffic.class" ] \
    || { echo "wire-check: no WireTraffic.class under $classes (build the test classes first)" >&2; exit 2; }

if ! command -v tshark >/dev/null 2>&1 || ! command -v dumpcap >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    # the package asks whether non-root users may capture: no (we capture as root)
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    apt-get update -q
    apt-get install -y -q --no-install-recommends tshark
fi
echo "wire-check: $(tshark -v 2>/dev/null | sed -n 1p)"

if [ -n "${WIRE_CHECK_DIR:-}" ]; then
    dir=$WIRE_CHECK_DIR
    mkdir -p "$dir"
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi
pcap=$dir/traffic.pcapng
rm -f "$pcap"

# 1. capture lo while the generator runs every variant (server ports $port..$port+19)
dumpcap -q -i lo -f "tcp portrange $port-$((port + 19))" -w "$pcap" >"$dir/dumpcap.log" 2>&1 &
dumpcap_pid=$!
for _ in $(seq 100); do
    [ -s "$pcap" ] && break
    kill -0 "$dumpcap_pid" 2>/dev/null || { cat "$dir/dumpcap.log" >&2; echo "wire-check: dumpcap failed" >&2; exit 1; }
    sleep 0.1
done
[ -s "$pcap" ] || { kill "$dumpcap_pid"; echo "wire-check: dumpcap did not start" >&2; exit 1; }
sleep 0.5 # the file header is written before the capture filter is live
gen_rc=0
timeout 120 java -Dio.netty.leakDetection.level=paranoid -cp "$jar:$classes" dev.iwarp.server.WireTraffic \
    --port "$port" --out "$dir/expect.tsv" >"$dir/traffic.log" 2>&1 || gen_rc=$?
sleep 0.5 # let the last FIN/ACK reach the capture
kill -INT "$dumpcap_pid"
wait "$dumpcap_pid" || true

# 2. the demo (serve and ping -C 10 in one JVM) with serve's own --pcap (Netty's PcapWriteHandler)
demo_rc=0
timeout 60 java -Dio.netty.leakDetection.level=paranoid -jar "$jar" demo --pcap "$dir/demo.pcap" \
    >"$dir/demo.log" 2>&1 || demo_rc=$?

# 2b. the same demo inside TLS 1.3 (self-signed, pinned): serve --pcap records the decrypted MPA stream
tls_rc=0
timeout 60 java -Dio.netty.leakDetection.level=paranoid -jar "$jar" demo --tls --pcap "$dir/demo-tls.pcap" \
    >"$dir/demo-tls.log" 2>&1 || tls_rc=$?

# 3. decode and compare
check_rc=0
java "$here/WireCheck.java" --expect "$dir/expect.tsv" --pcap "$pcap" --demo "$dir/demo.pcap" \
    --generator-exit "$gen_rc" --generator-log "$dir/traffic.log" --demo-exit "$demo_rc" \
    --demo-log "$dir/demo.log" --demo-tls "$dir/demo-tls.pcap" --demo-tls-exit "$tls_rc" \
    --demo-tls-log "$dir/demo-tls.log" || check_rc=$?
# what the capture itself saw: a connection missing from the checks is either not sent or not captured
echo "wire-check: dumpcap: $(tail -1 "$dir/dumpcap.log")"
if [ "$check_rc" -ne 0 ]; then
    echo "wire-check: the generator's log ends:" >&2
    tail -20 "$dir/traffic.log" >&2
fi
[ -n "${WIRE_CHECK_DIR:-}" ] && echo "wire-check: files in $dir"
exit "$check_rc"
