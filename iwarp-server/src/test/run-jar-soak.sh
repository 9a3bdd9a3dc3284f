#!/usr/bin/env bash
# bench --verify soak against serve as separate processes: CONNECTIONS (200) connections for SECONDS (30)
# of RDMA Writes, each read back and checked octet for octet, then echoed Sends checked likewise.
# Passes when bench finds 0 corrupted octets (exit 0), serve's live heap after a full GC grows by no more
# than 10% from a third into the Write run to its end (the in-flight state makes it swing a few percent
# either way; a leak per message or per connection grows it), and serve (paranoid leak detection) reports
# no leak.
# Usage: iwarp-server/src/test/run-jar-soak.sh [jar] [connections] [seconds] [port]
# The documented full soak: run-jar-soak.sh iwarp-server/target/iwarp-server.jar 1000 60
set -euo pipefail
. "$(dirname "$0")/wait-listening.sh"
jar="${1:-$(dirname "$0")/../../target/iwarp-server.jar}"
conns="${2:-200}"
secs="${3:-30}"
port="${4:-17178}"
size=4096
[ -f "$jar" ] || { echo "run-jar-soak: no jar at $jar (run mvn package first)" >&2; exit 2; }
command -v jcmd >/dev/null || { echo "run-jar-soak: needs jcmd (a JDK)" >&2; exit 2; }
dir="$(mktemp -d)"
log="$dir/serve.log"
# 4 slots of 4 KiB per connection: a serve that gives each connection its own target region (it then
# has --shared-target) needs 16 KiB each, one shared region 16 KiB times the connections; a serve that
# caps connections per source address must let all of ours (one address) in
help="$(java -jar "$jar" serve --help 2>&1 || true)"
target=$((conns * size * 4))
limits=(--max-connections $((conns + 8)))
grep -q -- '--shared-target' <<<"$help" && target=$((size * 4))
grep -q -- '--max-per-source' <<<"$help" && limits+=(--max-per-source $((conns + 8)))
java -Dio.netty.leakDetection.level=paranoid -jar "$jar" serve --address 127.0.0.1 --port "$port" \
    "${limits[@]}" --target-size "$target" 2>"$log" &
serve=$!
trap 'kill -9 $serve ${bench:-} 2>/dev/null || true; rm -rf "$dir"' EXIT
wait_listening $serve "$log" run-jar-soak

fail() { cat "$log" "$dir"/bench.* 2>/dev/null | tail -40; echo "run-jar-soak: $1" >&2; exit 1; }
# serve's live heap in KiB: the class histogram runs a full GC and sums what survived, in one step (a
# GC.run then GC.heap_info would count what serve allocated while the second jcmd attached)
heap_after_gc() {
    jcmd $serve GC.class_histogram | awk '/^Total/ { print int($3 / 1024) }'
}
# waits until bench's progress (stderr, about one line a second) reports second $1 or later of the run
wait_progress() {
    local i
    for i in $(seq 1 $((secs * 20 + 1200))); do
        awk -v t="$1" '/^bench: +[0-9]+ s / && $2 >= t { found = 1 } END { exit !found }' "$dir/bench.err" \
            && return 0
        kill -0 $bench 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

timeout $((secs * 3 + 300)) java -jar "$jar" bench "127.0.0.1:$port" --op write --size $size --depth 4 \
    --connections "$conns" --duration "$secs" --warmup 2s --verify --timeout 60000 --output csv \
    >"$dir/bench.out" 2>"$dir/bench.err" &
bench=$!
first=$(( secs / 3 > 3 ? secs / 3 : 3 ))
wait_progress $first || fail "bench did not start measuring"
early=$(heap_after_gc)
wait_progress $((secs - 3)) || fail "bench stopped early"
late=$(heap_after_gc)
wait $bench || fail "bench --verify exited $? (corrupted octets or a failed work request)"
bench=
cat "$dir/bench.out"
grep -q "verify failed" "$dir/bench.err" && fail "corrupted octets"
verified=$(tail -1 "$dir/bench.out" | awk -F, '{print $NF}')
[ "${verified:-0}" -gt 0 ] || fail "no octets verified"
echo "run-jar-soak: $conns connections, $secs s of Writes read back: $verified octets verified, 0 corrupted"
echo "run-jar-soak: serve heap after full GC: ${early} KiB at $first s, ${late} KiB at $((secs - 3)) s"
awk -v a="$early" -v b="$late" 'BEGIN { exit !((b - a) / a <= 0.10) }' \
    || fail "serve's heap after GC grew by more than 10% (${early} -> ${late} KiB)"

# the same connections' worth of echoed Sends, every echo checked (shorter)
timeout $((secs + 300)) java -jar "$jar" bench "127.0.0.1:$port" --op send --size 1000 --depth 8 \
    --connections "$conns" --duration $(( secs / 3 + 1 )) --warmup 0 --verify --timeout 60000 --output csv \
    >"$dir/bench.out" 2>"$dir/bench.err" || fail "bench --op send --verify exited $?"
echo "run-jar-soak: echoed Sends: $(tail -1 "$dir/bench.out" | awk -F, '{print $NF}') octets verified, 0 corrupted"

# leaks show once the buffers were collected and later allocations poll the detector's queue
for i in 1 2 3; do
    jcmd $serve GC.run >/dev/null
    java -jar "$jar" ping "127.0.0.1:$port" -C 3 >/dev/null 2>&1 || fail "ping after the soak failed"
done
kill -TERM $serve
wait $serve || true
grep -q "LEAK:" "$log" && fail "serve reported a leak"
grep -q "stopped after" "$log" || fail "no clean shutdown"
echo "run-jar-soak: OK"
