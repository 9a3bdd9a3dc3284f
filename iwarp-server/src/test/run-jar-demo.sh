#!/usr/bin/env bash
# Runs the packaged jar's demo as a separate process; for CI after `mvn package`.
# Usage: iwarp-server/src/test/run-jar-demo.sh [path/to/iwarp-server.jar]
set -euo pipefail
jar="${1:-$(dirname "$0")/../../target/iwarp-server.jar}"
[ -f "$jar" ] || { echo "run-jar-demo: no jar at $jar (run mvn package first)" >&2; exit 2; }
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
if ! timeout 120 java -jar "$jar" demo >"$out" 2>&1; then
    cat "$out"; echo "run-jar-demo: demo exited non-zero" >&2; exit 1
fi
cat "$out"
grep -q '^10/10 pings of 64 octets verified' "$out" || { echo "run-jar-demo: pings missing" >&2; exit 1; }
[ "$(grep -c '^ping data: rdma-ping-' "$out")" -eq 10 ] || { echo "run-jar-demo: expected 10 ping lines" >&2; exit 1; }
grep -q '^server: 10 RDMA Reads (640 octets), 10 RDMA Writes (640 octets), 20 Sends$' "$out" \
    || { echo "run-jar-demo: server counts wrong" >&2; exit 1; }
grep -q '^demo: OK$' "$out" || { echo "run-jar-demo: no 'demo: OK'" >&2; exit 1; }
echo "run-jar-demo: OK"
