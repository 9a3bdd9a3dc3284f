#!/usr/bin/env bash
# Hostile-load suite: the packaged serve as a separate process (small heap and direct memory, so that the attacks
# matter), each attack of the hostile-peer review run against it from a separate attacker process (benchmarks'
# dev.iwarp.benchmarks.hostile.HostileLoad), a fresh serve per attack. During every attack the jar's own ping must
# complete. Per attack it prints serve's live heap after a full GC, JDK direct buffers, VmRSS, log lines and serve's
# CPU per attacker input, and checks these bounds (a failure names the attack and the bound):
#   heap    serve's live heap after a full GC <= HEAP_BOUND_MIB (64 MiB: serve idles at 10-20 MiB; the rest is the
#           margin for the state of the attacks' at most 1,400 connections)
#   direct  JDK direct buffers <= the memory budget (--memory-budget, 64 MiB here) + 32 MiB (allocator chunks)
#   ping    a legitimate ping (3 pings, each verified) completes while the attack is on
#   attack  the bound the attack checks itself (per-/24 connections, silent sockets closed, never-reading
#           connection closed, partial FPDU closed by the message deadline, markers refused, Read Response rate,
#           TLS handshake rate); see HostileLoad
#   log     serve's log grows by the rate its limiter allows, not by the attacker's inputs: at most LOG_FIXED (20)
#           lines of start, stop and settings, plus LOG_PER_WINDOW (300: 200 connection events and 100 warnings
#           naming peers, serve's defaults) per 10-s window serve ran
#   leak    no "LEAK:" line (every buffer tracked: simple level, sampling interval 1)
#   stop    serve stops within 5 s of SIGTERM with exit status 0, or 143 (the JVM's status for SIGTERM) after it
#           logged "stopped after" (its shutdown ran)
# Options that the agreed design names but this serve lacks are left out, one line each saying so (the run goes
# on: the bounds still apply, which is how the figures of a serve without them are recorded).
# Usage: interop/hostile-load.sh [server jar] [benchmarks jar] [port] [attack ...]   (about 2.5 minutes)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="${1:-$here/../iwarp-server/target/iwarp-server.jar}"
bench="${2:-$here/../benchmarks/target/benchmarks.jar}"
port="${3:-17190}"
shift $(( $# < 3 ? $# : 3 ))
attacks=("$@")
[ ${#attacks[@]} -gt 0 ] || attacks=(ird0-adverts commit-memory per-prefix zero-writes partial-fpdu markers \
    read-rate tls-flood log-flood)
for f in "$jar" "$bench"; do
    [ -f "$f" ] || { echo "hostile-load: no jar at $f (run mvn package first)" >&2; exit 2; }
done
ulimit -n 8192 2>/dev/null || true
HEAP_BOUND_MIB=64
BUDGET=$((64 << 20))
DIRECT_MARGIN=$((32 << 20))
LOG_FIXED=20
LOG_PER_WINDOW=300
dir="$(mktemp -d)"
serve=
trap '[ -n "$serve" ] && kill -9 $serve 2>/dev/null; rm -rf "$dir"' EXIT
help="$(java -jar "$jar" serve --help 2>&1 || true)"
failures=()
summary=()

# serve_opts NAME VALUE ...: the options this serve has; the others are named once and left out
serve_opts() {
    opts=()
    while [ $# -gt 0 ]; do
        local name=$1 value=${2-}
        if [ "$name" = --tls ]; then
            opts+=(--tls); shift; continue
        fi
        if grep -q -- "$name[ ,=]" <<<"$help"; then
            opts+=("$name" "$value")
        else
            echo "hostile-load: this serve has no $name (left out; the bound for it still applies)"
        fi
        shift 2
    done
}

# "serve CPU N us per <input>" from a figures line, where the attack counts inputs
cpu_per_input() {
    local unit us
    unit=$(grep -o ' input=[^ ]*' <<<"$1" | cut -d= -f2)
    us=$(grep -o 'cpu_us_per_input=[0-9]*' <<<"$1" | cut -d= -f2)
    [ -n "$unit" ] && [ "$unit" != n/a ] && echo "serve CPU $us us per ${unit%s}"
}

run_attack() {
    local name=$1; shift
    local attacker_args=() ping_args=()
    local log="$dir/$name.log" out="$dir/$name.out"
    case $name in
        ird0-adverts)  serve_opts --memory-budget $BUDGET; attacker_args=(--seconds 5) ;;
        commit-memory) serve_opts --memory-budget $BUDGET --max-per-source 0 --max-startups-per-source 1024
                       attacker_args=(--connections 150) ;;
        per-prefix)    serve_opts --memory-budget $BUDGET --max-per-source 50 --max-startups-per-source 16 \
                           --first-octet-timeout 1000
                       attacker_args=(--max-per-source 50 --first-octet-timeout 1000) ;;
        zero-writes)   serve_opts --memory-budget $BUDGET --idle-timeout 2 --drain-timeout 3
                       attacker_args=(--idle-timeout 2 --drain-timeout 3) ;;
        partial-fpdu)  serve_opts --memory-budget $BUDGET --message-deadline 1000 --idle-timeout 30
                       attacker_args=(--message-deadline 1000) ;;
        markers)       serve_opts --memory-budget $BUDGET; attacker_args=(--seconds 3) ;;
        read-rate)     serve_opts --memory-budget $BUDGET --read-rate 2097152
                       attacker_args=(--read-rate 2097152 --seconds 3) ;;
        tls-flood)     serve_opts --memory-budget $BUDGET --tls --tls-handshake-rate 4
                       attacker_args=(--tls-handshake-rate 4 --seconds 4) ;;
        log-flood)     serve_opts --memory-budget $BUDGET; attacker_args=(--seconds 5) ;;
        *) echo "hostile-load: unknown attack $name" >&2; return 2 ;;
    esac
    echo "hostile-load: attack $name: serve ${opts[*]}"
    java -Xmx256m -XX:MaxDirectMemorySize=256m -Dio.netty.leakDetection.level=simple \
        -Dio.netty.leakDetection.samplingInterval=1 -jar "$jar" serve --address 127.0.0.1 --port "$port" \
        "${opts[@]}" 2>"$log" &
    serve=$!
    serve_started=$SECONDS
    local i
    for i in $(seq 1 150); do
        grep -qs "listening on" "$log" && break
        kill -0 $serve 2>/dev/null || break
        sleep 0.2
    done
    if ! grep -q "listening on" "$log"; then
        tail -5 "$log"; failures+=("$name: serve did not start"); kill -9 $serve 2>/dev/null; serve=; return
    fi
    if [ $name = tls-flood ]; then
        local pin; pin=$(grep -o 'fingerprint SHA256:[0-9A-Fa-f:]*' "$log" | sed -n 1p | cut -d' ' -f2)
        ping_args=(--ping-arg=--tls --ping-arg=--pin --ping-arg="$pin")
    fi
    local failed_before=${#failures[@]}
    timeout 150 java -cp "$bench" dev.iwarp.benchmarks.hostile.HostileLoad --attack "$name" --port "$port" \
        --pid $serve --ping-jar "$jar" "${attacker_args[@]}" "${ping_args[@]}" >"$out" 2>&1
    local rc=$?
    grep -v '^hostile-figures' "$out" | sed 's/^/  /'
    local fig; fig=$(grep '^hostile-figures' "$out" | tail -1)
    [ $rc -eq 0 ] || failures+=("$name: the attacker reported a failed bound (exit $rc; its FAIL lines above)")
    [ -n "$fig" ] || failures+=("$name: the attacker printed no figures")
    local heap direct rss
    heap=$(grep -o 'heap_after_gc_kib=[-0-9]*' <<<"$fig" | cut -d= -f2)
    direct=$(grep -o 'direct_kib=[-0-9]*' <<<"$fig" | cut -d= -f2)
    rss=$(grep -o 'rss_kib=[-0-9]*' <<<"$fig" | cut -d= -f2)
    if [ -z "$heap" ] || [ "$heap" -lt 0 ]; then
        failures+=("$name: heap bound: serve's heap could not be measured (serve not answering)")
    elif [ "$heap" -gt $((HEAP_BOUND_MIB * 1024)) ]; then
        failures+=("$name: heap bound: live heap after GC $heap KiB > $((HEAP_BOUND_MIB * 1024)) KiB")
    fi
    if [ -n "$direct" ] && [ "$direct" -gt $(((BUDGET + DIRECT_MARGIN) / 1024)) ]; then
        failures+=("$name: direct bound: $direct KiB of direct buffers > budget $((BUDGET >> 10)) KiB + $((DIRECT_MARGIN >> 10)) KiB")
    fi
    # SIGTERM: exit 0 within 5 s
    local stopped=no code=
    if kill -0 $serve 2>/dev/null; then
        kill -TERM $serve
        for i in $(seq 1 50); do
            kill -0 $serve 2>/dev/null || { stopped=yes; break; }
            sleep 0.1
        done
        if [ $stopped = yes ]; then wait $serve; code=$?; else kill -9 $serve; wait $serve 2>/dev/null; fi
    else
        wait $serve; code="died ($?)"
    fi
    serve=
    # 143 is the JVM's own status after SIGTERM ran its shutdown hooks: clean when serve logged its last line
    if [ $stopped != yes ] || ! { [ "$code" = 0 ] || { [ "$code" = 143 ] && grep -q "stopped after" "$log"; }; }; then
        failures+=("$name: stop bound: serve on SIGTERM: stopped=$stopped exit=${code:-none} (bound: exit 0, or 143 after its \"stopped after\" line, within 5 s)")
    fi
    local lines; lines=$(wc -l <"$log")
    local windows=$(( (SECONDS - serve_started + 9) / 10 ))
    local log_bound=$(( LOG_FIXED + LOG_PER_WINDOW * windows ))
    [ "$lines" -le $log_bound ] || failures+=("$name: log bound: $lines log lines > $log_bound ($LOG_FIXED + $LOG_PER_WINDOW per 10 s, $windows windows)")
    grep -q "LEAK:" "$log" && failures+=("$name: leak bound: serve reported a leak: $(grep -m1 'LEAK:' "$log")")
    grep -q "OutOfMemoryError" "$log" && echo "  serve logged an OutOfMemoryError: $(grep -m1 OutOfMemoryError "$log")"
    echo "  $fig log_lines=$lines sigterm_exit=${code:-none}"
    if [ ${#failures[@]} -gt $failed_before ]; then
        echo "  serve's last log lines:"; tail -3 "$log" | cut -c1-300 | sed 's/^/    /'
    fi
    summary+=("$(printf '%-14s heap %7s KiB  direct %7s KiB  RSS %7s KiB  log %5s lines  %s' "$name" "$heap" \
        "$direct" "$rss" "$lines" "$(cpu_per_input "$fig")")")
}

start=$(date +%s)
for a in "${attacks[@]}"; do
    run_attack "$a"
done
echo "hostile-load: $(( $(date +%s) - start )) s; per attack:"
printf '  %s\n' "${summary[@]}"
if [ ${#failures[@]} -gt 0 ]; then
    echo "hostile-load: FAILED bounds:" >&2
    printf '  %s\n' "${failures[@]}" >&2
    exit 1
fi
echo "hostile-load: OK"
