#!/usr/bin/env bash
# Idle connections at 10,000 and 100,000, inside the sctp-vm guest (../shared/interop/sctp-vm: a Debian 6.1
# kernel and a JRE 17 booted from an initramfs), where we are root and can raise what a container's hard
# open-files limit (20,000 here) forbids. In one boot, for each count N given (default: 10000 100000):
#   serve B on 127.0.0.1:7174 with its defaults except --max-connections N (its default follows the guest's
#     memory: 3/4 of the direct-memory limit / 128 KiB, ~11,500 with 8 GiB) and --idle-timeout 3600 (opening
#     100,000 under emulation takes longer than the default 60 s, which would close the first ones before the
#     last are open; the timer is still armed per connection, as with the default),
#   serve A on 127.0.0.1:7175, defaults, holding nothing: the idle server the latency is compared with,
#   benchmarks' IdleConnections: N MPA connections to B (250 per source /24 from 127.0.1.1 on), held idle;
#     B's CPU over --hold s after --settle s, VmRSS per connection, /proc/net/sockstat and the socket slab
#     caches per connection, ping -C 3 -V against B, then interleaved A B rounds of bench --op send --depth 1
#     (echoed 64-octet Sends, p50 and p99 per round and their medians).
# Kernel settings raised in the guest (each printed): ulimit -n (hard and soft) 1048576, fs.nr_open 1100000,
# fs.file-max 2200000, net.ipv4.ip_local_port_range 1024 65535, net.core.somaxconn 65535,
# net.ipv4.tcp_max_syn_backlog 65535; tcp_mem is left at the kernel's default (printed): idle sockets hold no
# buffer pages.
# Usage (root): interop/idle-100k-vm.sh [N ...]; env: IDLE_VM_MEM (MiB, default 8192), IDLE_VM_SMP (2),
# IDLE_VM_TIMEOUT (s, default 3000), IDLE_SERVE_OPTS (more serve B options), IDLE_LATENCY_ROUNDS (3),
# IDLE_JARS (dir holding iwarp-server.jar and benchmarks.jar; default: the modules' target dirs), IDLE_SHARE (the
# shared dir, default a temporary one; IdleConnections' output appears in its progress.txt as it runs).
# Output: stdout (tee it).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
COUNTS=${*:-10000 100000}
SERVER_JAR=${IDLE_JARS:-$ROOT/iwarp-server/target}/iwarp-server.jar
BENCH_JAR=${IDLE_JARS:-$ROOT/benchmarks/target}/benchmarks.jar
for f in "$SERVER_JAR" "$BENCH_JAR"; do
    [[ -f $f ]] || { echo "idle-100k-vm: no jar at $f (mvn package first)" >&2; exit 2; }
done
VM=${SCTP_VM:-$ROOT/../shared/interop/sctp-vm}
[[ -d $VM ]] || VM=/work/shared/interop/sctp-vm
bash "$VM/setup.sh" >/dev/null
if [[ -n ${IDLE_SHARE:-} ]]; then
    SHARE=$IDLE_SHARE && mkdir -p "$SHARE"
else
    SHARE=$(mktemp -d) && trap 'rm -rf "$SHARE"' EXIT
fi
cp "$SERVER_JAR" "$SHARE/iwarp-server.jar"
cp "$BENCH_JAR" "$SHARE/benchmarks.jar"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg) at start; guest accelerator: $(source \
    "${SCTPVM_CACHE:-/var/cache/sctp-vm}/accel.env" 2>/dev/null; echo "${ACCEL:-unknown}") (tcg: emulated)"
echo "$COUNTS" > "$SHARE/counts"
echo "${IDLE_SERVE_OPTS:-}" > "$SHARE/serve-opts"
echo "${IDLE_LATENCY_ROUNDS:-3}" > "$SHARE/rounds"
cat > "$SHARE/guest.sh" <<'GUEST'
set -u
cp /host/iwarp-server.jar /host/benchmarks.jar /tmp/ && cd /tmp
echo "guest: $(uname -r), $(nproc) vCPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"\
     "$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); $(java -version 2>&1 | sed -n 1p)"
sysctl -qw fs.nr_open=1100000 fs.file-max=2200000 net.ipv4.ip_local_port_range="1024 65535" \
    net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535
ulimit -Hn 1048576 && ulimit -n 1048576
echo "limits: ulimit -n $(ulimit -n) (hard $(ulimit -Hn))"
for k in fs/nr_open fs/file-max net/ipv4/ip_local_port_range net/core/somaxconn net/ipv4/tcp_max_syn_backlog \
         net/ipv4/tcp_mem net/ipv4/tcp_rmem net/ipv4/tcp_wmem; do
    echo "sysctl $(echo $k | tr / .) = $(tr '\t' ' ' < /proc/sys/$k)"
done
listening() { for i in $(seq 1 120); do grep -q "listening" "$1" && return 0; sleep 1; done; echo "no listen: $1"; cat "$1"; return 1; }
java -jar iwarp-server.jar serve --address 127.0.0.1 --port 7175 > serveA.log 2>&1 &
A=$!
listening serveA.log || exit 1
rc=0
for n in $(cat /host/counts); do
    echo "=== $n idle connections"
    java -jar iwarp-server.jar serve --address 127.0.0.1 --port 7174 --max-connections "$n" --idle-timeout 3600 \
        $(cat /host/serve-opts) > serveB.log 2>&1 &
    B=$!
    listening serveB.log || exit 1
    grep -m1 "memory budget" serveB.log | sed 's/^.*memory budget/serve B: memory budget/'
    echo "serve B: $(tr '\0' ' ' < /proc/$B/cmdline)"
    t0=$(date +%s)
    # the opening's progress while it runs (IdleConnections prints only once every startup ended)
    ( while sleep 60; do echo "progress: $(( $(date +%s) - t0 )) s, $(grep '^TCP:' /proc/net/sockstat)," \
        "serve B VmRSS $(awk '/VmRSS/ {print $2, $3}' /proc/$B/status)" >> /host/progress.txt; done ) &
    P=$!
    java -Xmx3g -cp benchmarks.jar dev.iwarp.benchmarks.IdleConnections --connections "$n" --port 7174 --pid $B \
        --ping-jar /tmp/iwarp-server.jar --settle 30 --hold 40 --open-timeout 2400 --latency-idle-port 7175 \
        --latency-rounds "$(cat /host/rounds)" --latency-iterations 2000 2>&1 | tee -a /host/progress.txt
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    kill $P 2>/dev/null
    echo "(IdleConnections took $(( $(date +%s) - t0 )) s; serve A's VmRSS $(awk '/VmRSS/ {print $2, $3}' /proc/$A/status))"
    grep -E "WARN|ERROR" serveB.log | cut -c1-200 | sort | uniq -c | sort -rn | sed -n 1,5p
    kill $B; wait $B 2>/dev/null
done
kill $A; wait $A 2>/dev/null
echo "guest-result $rc"
GUEST
"$VM/run.sh" -q --mem "${IDLE_VM_MEM:-8192}" --smp "${IDLE_VM_SMP:-2}" --share "$SHARE" \
    --timeout "${IDLE_VM_TIMEOUT:-3000}" -- 'bash /host/guest.sh' | tee "$SHARE/out.txt"
echo "host load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -q "guest-result 0" "$SHARE/out.txt"
