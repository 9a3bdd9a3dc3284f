#!/usr/bin/env bash
# serve --wire ift, then ping, bench (write, read, send) and demo over IFT (DDP/RDMAP over
# draft-williams-iwarp-ift-01) as separate processes on loopback, then SIGTERM: for CI after `mvn package`.
# Usage: iwarp-server/src/test/run-jar-ift.sh [path/to/iwarp-server.jar] [port]
set -euo pipefail
. "$(dirname "$0")/wait-listening.sh"
jar="${1:-$(dirname "$0")/../../target/iwarp-server.jar}"
port="${2:-17176}"
start_serve run-jar-ift "$jar" "$port" --wire ift --max-connections 4
grep -q "listening on.*IFT node B" "$log" || { cat "$log"; echo "run-jar-ift: serve did not start" >&2; exit 1; }

fail() { echo "$out"; cat "$log"; echo "run-jar-ift: $1" >&2; exit 1; }
out="$(timeout 60 java -jar "$jar" ping "127.0.0.1:$port" --wire ift -C 5 -S 9000 -v -V)" || fail "ping exited $?"
sed -n 1p <<<"$out"
sed -n '$p' <<<"$out"
grep -q '^5/5 pings of 9000 octets verified' <<<"$out" || fail "ping failed"
grep -q 'IFT node A, CRC out header+payload, in header+payload checked' <<<"$out" || fail "ping did not negotiate both CRCs"
# one CRC choice per operation, so each shows up on the wire at least once
crcs=(header,payload payload none)
i=0
for op in write read send; do
    size=65536; [ $op = send ] && size=1000
    out="$(timeout 60 java -jar "$jar" bench "127.0.0.1:$port" --wire ift --op $op --size $size --iterations 300 \
        --ift-send-crc "${crcs[$i]}")" || fail "bench --op $op exited $?"
    echo "$out"
    grep -q "bench $op: $size octets x 300, .*IFT CRC ${crcs[$i]/,/+}" <<<"$out" || fail "bench --op $op failed"
    grep -q 'iterations 300,' <<<"$out" || fail "bench --op $op failed"
    i=$((i + 1))
done

kill -TERM $serve
wait $serve || true
cat "$log"
grep -q "echoes)" "$log" || { echo "run-jar-ift: no session summary" >&2; exit 1; }
# connections: the ping, each bench's own, and two short ones per bench asking serve for its cost
grep -q "stopped after 10 connection(s), 0 refused" "$log" || { echo "run-jar-ift: no clean shutdown" >&2; exit 1; }

out="$(timeout 60 java -jar "$jar" demo --wire ift 2>/dev/null)" || fail "demo exited $?"
grep -q '^demo: OK' <<<"$out" || fail "demo failed"
echo "demo --wire ift: OK"
echo "run-jar-ift: OK"
