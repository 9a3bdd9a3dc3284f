#!/usr/bin/env bash
# Issue 13's scale check as separate processes: serve on its defaults, then benchmarks' IdleConnections
# opens CONNECTIONS (10000) idle MPA connections to it (full startup, the target advertisement checked),
# prints serve's memory per connection (no threshold: the figure is for people), and runs ping meanwhile.
# Passes when every connection was established and still open after the ping, and the ping answered.
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
        --pid $serve --ping-jar "$jar"; then
    tail -20 "$log"
    echo "run-jar-idle: FAILED" >&2
    exit 1
fi
kill -TERM $serve
wait $serve || true
echo "run-jar-idle: OK"
