#!/usr/bin/env bash
# serve --wire vitcp, then ping, bench (write, read, send) and demo over VI/TCP as separate processes on
# loopback, then SIGTERM: for CI after `mvn package`.
# Usage: iwarp-server/src/test/run-jar-vitcp.sh [path/to/iwarp-server.jar] [port]
set -euo pipefail
. "$(dirname "$0")/wait-listening.sh"
jar="${1:-$(dirname "$0")/../../target/iwarp-server.jar}"
port="${2:-17175}"
start_serve run-jar-vitcp "$jar" "$port" --wire vitcp --max-connections 4
grep -q "listening on.*VI/TCP" "$log" || { cat "$log"; echo "run-jar-vitcp: serve did not start" >&2; exit 1; }

fail() { echo "$out"; cat "$log"; echo "run-jar-vitcp: $1" >&2; exit 1; }
out="$(timeout 60 java -jar "$jar" ping "127.0.0.1:$port" --wire vitcp -C 5 -S 9000 -v -V --crc)" || fail "ping exited $?"
sed -n 1p <<<"$out"
sed -n '$p' <<<"$out"
grep -q '^5/5 pings of 9000 octets verified' <<<"$out" || fail "ping failed"
grep -q 'VI/TCP Reliable Delivery, CRC on' <<<"$out" || fail "ping did not negotiate the CRC option"
for op in write read send; do
    size=65536; [ $op = send ] && size=1000
    out="$(timeout 60 java -jar "$jar" bench "127.0.0.1:$port" --wire vitcp --op $op --size $size --iterations 300)" \
        || fail "bench --op $op exited $?"
    echo "$out"
    grep -q "bench $op: $size octets x 300, .*VI/TCP Reliable Delivery" <<<"$out" || fail "bench --op $op failed"
    grep -q 'iterations 300,' <<<"$out" || fail "bench --op $op failed"
done

kill -TERM $serve
wait $serve || true
cat "$log"
grep -q "echoes)" "$log" || { echo "run-jar-vitcp: no session summary" >&2; exit 1; }
# connections: the ping, each bench's own, and two short ones per bench asking serve for its cost
grep -q "stopped after 10 connection(s), 0 refused" "$log" || { echo "run-jar-vitcp: no clean shutdown" >&2; exit 1; }

out="$(timeout 60 java -jar "$jar" demo --wire vitcp 2>/dev/null)" || fail "demo exited $?"
grep -q '^demo: OK' <<<"$out" || fail "demo failed"
echo "demo --wire vitcp: OK"
echo "run-jar-vitcp: OK"
