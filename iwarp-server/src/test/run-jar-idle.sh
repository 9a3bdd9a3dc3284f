#!/usr/bin/env bash
# The scale check as separate processes: serve on its defaults, then benchmarks' IdleConnections opens
# CONNECTIONS (10000) idle MPA connections to it (full startup, the target advertisement checked; sources
# spread over 127.0.1.0/24, 127.0.2.0/24, ..., 250 per /24), holds them idle 10 s and measures serve.
# A benchmark with thresholds: passes when every connection was established and still open after a ping
# that answered, serve's CPU while they were idle was <= 3 % of a core (IDLE_MAX_CPU) and its RSS grew by
# <= 18 KiB per connection (IDLE_MAX_RSS_KIB; the target is 12 KiB, not met yet: 12.2-15.4 KiB measured on a
# 2-core machine, of which 5.7 KiB is live heap and most of the rest heap the JVM keeps committed after the
# opening burst; 18 KiB catches a regression without failing on that spread), and each of serve's limits (first-octet timeout 2 s,
# startup timeout 10 s, message deadline 10 s, idle timeout 60 s) closed a probe connection within 25 %
# of its value while the connections were held. Takes about 90 s (the idle timeout is 60 s).
# Usage: iwarp-server/src/test/run-jar-idle.sh [server jar] [benchmarks jar] [connections] [port]
set -euo pipefail
. "$(dirname "$0")/wait-listening.sh"
jar="${1:-$(dirname "$0")/../../target/iwarp-server.jar}"
bench="${2:-$(dirname "$0")/../../../benchmarks/target/benchmarks.jar}"
conns="${3:-10000}"
port="${4:-17179}"
for f in "$jar" "$bench"; do
    [ -f "$f" ] || { echo "run-jar-idle: no jar at $f (run mvn package first)" >&2; exit 2; }
done
# a descriptor per connection on each side: raise the limit where we may (root), else use what there is
ulimit -n 32768 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
limit=$(ulimit -n)
if [ "$limit" != unlimited ] && [ "$conns" -gt $((limit - 200)) ]; then
    echo "run-jar-idle: open-files limit $limit: $((limit - 200)) connections instead of $conns"
    conns=$((limit - 200))
fi
dir="$(mktemp -d)"
log="$dir/serve.log"
java -jar "$jar" serve --address 127.0.0.1 --port "$port" 2>"$log" &
serve=$!
trap 'kill -9 $serve 2>/dev/null || true; rm -rf "$dir"' EXIT
wait_listening $serve "$log" run-jar-idle
if ! java -cp "$bench" dev.iwarp.benchmarks.IdleConnections --connections "$conns" --port "$port" \
        --pid $serve --ping-jar "$jar" --max-cpu-percent "${IDLE_MAX_CPU:-3}" \
        --max-rss-kib "${IDLE_MAX_RSS_KIB:-18}" --check-limits; then
    tail -20 "$log"
    echo "run-jar-idle: FAILED" >&2
    exit 1
fi
kill -TERM $serve
wait $serve || true
echo "run-jar-idle: OK"
