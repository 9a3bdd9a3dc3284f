#!/usr/bin/env bash
# serve, ping and bench as separate processes on loopback, then SIGTERM: for CI after `mvn package`.
# Usage: iwarp-server/src/test/run-jar-processes.sh [path/to/iwarp-server.jar] [port]
set -euo pipefail
. "$(dirname "$0")/wait-listening.sh"
jar="${1:-$(dirname "$0")/../../target/iwarp-server.jar}"
port="${2:-17174}"
start_serve run-jar-processes "$jar" "$port"

out="$(timeout 60 java -jar "$jar" ping "127.0.0.1:$port" -C 5 -S 1000 -v -V)" || { echo "$out"; cat "$log"; exit 1; }
echo "$out" | tail -1
grep -q '^5/5 pings of 1000 octets verified' <<<"$out" || { cat "$log"; echo "run-jar-processes: ping failed" >&2; exit 1; }
out="$(timeout 60 java -jar "$jar" bench "127.0.0.1:$port" --op write --size 65536 --iterations 500)" \
    || { echo "$out"; cat "$log"; exit 1; }
echo "$out"
grep -q 'iterations 500,' <<<"$out" || { cat "$log"; echo "run-jar-processes: bench failed" >&2; exit 1; }

kill -TERM $serve
wait $serve || true
cat "$log"
# connections: the ping, each bench's own, and two short ones per bench asking serve for its cost
grep -q "stopped after 4 connection(s), 0 refused" "$log" || { echo "run-jar-processes: no clean shutdown" >&2; exit 1; }
echo "run-jar-processes: OK"
