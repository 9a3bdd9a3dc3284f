#!/usr/bin/env bash
# Where an idle connection's memory goes: serve (--idle-timeout 900, so that a slow opening burst does not close
# the first connections) gets N idle connections from IdleConnections (MPA, IFT, or TLS + MPA); serve's live-object
# class histogram (jcmd GC.class_histogram, which collects first) is taken before and while they are held, and
# the kernel's socket memory (ss -m) of the held connections is counted. Per connection:
#   python3 benchmarks/scripts/histogram-diff.py OUT/histo0-MODE.txt OUT/histo-MODE.txt HELD
# usage: benchmarks/scripts/idle-histogram.sh mpa|ift|tls N PORT OUTDIR
#   env JDIR: a directory holding iwarp-server.jar and benchmarks.jar (default: the modules' target dirs)
#   env SERVE_JAVA_OPTS: JVM options for serve only, e.g. -XX:NativeMemoryTracking=summary (then the JVM's own
#     account of its memory, jcmd VM.native_memory summary, is taken with each histogram: OUT/nmt0-MODE.txt and
#     OUT/nmt-MODE.txt, committed KiB per category: Java Heap, Class, Thread, Code, GC, Internal, Other, ...)
#   env SERVE_OPTS: more serve options (e.g. --max-per-source 1024); env IDLE_OPTS: more IdleConnections options
#     (e.g. --in-flight 24 for TLS, whose handshakes cost CPU on both sides); env IDLE_OPEN_TIMEOUT: seconds for
#     the opening (default 400)
set -u
mode=$1 n=$2 port=$3 out=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
J=${JDIR:-$ROOT/iwarp-server/target}/iwarp-server.jar B=${JDIR:-$ROOT/benchmarks/target}/benchmarks.jar
mkdir -p "$out"; log=$out/serve-$mode.log
extra=(); copt=()
case $mode in ift) extra=(--wire ift); copt=(--wire ift);; tls) extra=(--tls);; esac
java ${SERVE_JAVA_OPTS:-} -jar $J serve --address 127.0.0.1 --port $port --idle-timeout 900 "${extra[@]}" \
    ${SERVE_OPTS:-} 2>$log >$out/serve-$mode.out &
s=$!
for i in $(seq 90); do grep -q "listening on" $log $out/serve-$mode.out 2>/dev/null && break; sleep 1; done
nmt() { case "${SERVE_JAVA_OPTS:-}" in *NativeMemoryTracking*) jcmd $s VM.native_memory summary > "$1" 2>&1;; esac; }
sleep 2; jcmd $s GC.class_histogram > $out/histo0-$mode.txt 2>&1; nmt $out/nmt0-$mode.txt
pin=""; if [ $mode = tls ]; then pin=$(grep -ohE "fingerprint SHA256:[0-9A-Fa-f:]+" $log $out/serve-$mode.out | sed -n 1p | cut -d" " -f2); copt=(--tls-pin "$pin"); fi
java -cp $B dev.iwarp.benchmarks.IdleConnections --connections $n --port $port --pid $s --settle 3 --hold 30 --open-timeout ${IDLE_OPEN_TIMEOUT:-400} --ping-jar $J "${copt[@]}" ${IDLE_OPTS:-} > $out/idle-$mode.txt 2>&1 &
c=$!
for i in $(seq $((${IDLE_OPEN_TIMEOUT:-400} + 100))); do grep -q "^opened" $out/idle-$mode.txt && break; sleep 1; done
sleep 5
jcmd $s GC.class_histogram > $out/histo-$mode.txt 2>&1; nmt $out/nmt-$mode.txt
ss -Htnm state established "( sport = :$port )" | grep -o 'skmem:([^)]*)' | sed 's/,d[0-9]*)/)/' | sort | uniq -c | sort -rn | sed -n 1,5p > $out/skmem-$mode.txt
wait $c; kill $s; wait $s 2>/dev/null
