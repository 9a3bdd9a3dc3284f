#!/usr/bin/env bash
# perftest.sh - stock perftest (-R, Debian 12's "6.06") against our ib_* commands in both roles, in the siw VM,
# and ours against ours on loopback.
#
# Usage: interop/perftest.sh [path/to/iwarp-server.jar]
# Env:   SIWVM_DIR          the siw-vm harness (default: ../shared/interop/siw-vm beside the checkout)
#        PERFTEST_OUT       where logs and pcaps go (default: target/perftest)
#        PERFTEST_PORT_BASE first port (default 18515): our servers for A on the host at BASE..BASE+6, the
#                           guest's stock servers for B at BASE+10..BASE+12 (forwarded from the same host
#                           ports), C on the host at BASE+20. A's and B's ports never overlap, so a capture
#                           filtered on one of A's ports holds only that run
#        PERFTEST_PARTS     which parts to run (default "C AB")
#        PERFTEST_RECHECK   a directory of an earlier A/B run: only check its files
#        PERFTEST_SETUP=1   run the harness's setup.sh even when its cache holds a built VM
#
# C  ours against ours on 127.0.0.1: each of the six tests with -a (every size 2..2^23) and -n 3, in the
#    background while the VM part runs.
# A  in one VM boot, each stock client (ib_{write,read,send}_bw -s 4096 -n 20, ib_*_lat -s 64 -n 100) against
#    our server on the host (10.0.2.2 in the guest), each captured on eth0; plus the negative case: our
#    ib_send_bw server -s 64 against a stock client sending 4096 octets.
# B  in the same boot, stock ib_{write,read,send}_bw servers in the guest and our clients through --hostfwd,
#    concurrently with A (hence the disjoint ports).
# The only retry: perftest calibrates its clock before it runs (get_clock.c, sample_get_cpu_mhz) and, when the
# fit's r^2 is below 0.9 (a loaded host under TCG), prints "Correlation coefficient r^2: ... < 0.9" and takes
# 0 MHz: a bandwidth test then prints "Can't produce a report", a latency test a table of inf. Such a stock run
# (and only such a one, recognised by both lines) runs once more; a failure of ours is never retried.
# Every check is one row; exit 1 if any row failed. Needs root (the VM).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JAR=$(cd "$(dirname "${1:-$ROOT/iwarp-server/target/iwarp-server.jar}")" && pwd)/$(basename "${1:-iwarp-server.jar}")
SIWVM_DIR=${SIWVM_DIR:-$ROOT/../shared/interop/siw-vm}
OUT=${PERFTEST_OUT:-$ROOT/target/perftest}
BASE=${PERFTEST_PORT_BASE:-18515}
PARTS=${PERFTEST_PARTS:-C AB}
TESTS="ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat"

[[ -f $JAR ]] || { echo "perftest: no jar at $JAR (run mvn package first)" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT"
T0=$SECONDS
say() { printf '[perftest %4ss] %s\n' $((SECONDS - T0)) "$*"; }

ROWS=() PASS=0 FAIL=0 PIDS=()
# SIGTERM to every process this script started and to their descendants, listed before any is signalled: a
# TERM to run.sh alone leaves its qemu running (it holds the --hostfwd ports until its own timeout, and the
# next run cannot boot); timeout(1) passes TERM on to the qemu or java it runs. Our servers run under their
# own timeout(1), in their own process groups: a TERM to this script's group does not reach them, this does
descendants() { local c; for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done; }
cleanup() {
  local p all=()
  for p in "${PIDS[@]}"; do all+=("$p" $(descendants "$p")); done
  [[ ${#all[@]} -eq 0 ]] || kill -TERM "${all[@]}" 2>/dev/null || true
}
trap cleanup EXIT

DIR=$OUT
row() {  # row NAME "what" CHECK...: passes when every CHECK (a shell condition) holds
  local name=$1 what=$2 c verdict=PASS; shift 2
  for c in "$@"; do eval "$c" 2>/dev/null || { verdict=FAIL; break; }; done
  if [[ $verdict == PASS ]]; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); fi
  ROWS+=("$(printf '%-22s %-4s %s' "$name" "$verdict" "$what")")
  if [[ $verdict == FAIL ]]; then
    echo "---- FAIL $name: $what (failed: $c); its output:"
    local f base=${name#C-}; for f in "$DIR/$base".* "$DIR/srv-$base".log; do
      if [[ -f $f && $f != *.pcap ]]; then tail -15 "$f" | sed "s|^|    $(basename "$f"): |"; fi
    done
  fi
  return 0
}
has() { grep -q -E -- "$2" "$DIR/$1"; }                                  # has FILE REGEX
hasnt() { ! grep -q -E -- "$2" "$DIR/$1"; }                              # hasnt FILE REGEX
rc() { [[ $(cat "$DIR/$1" 2>/dev/null) == "$2" ]]; }                     # rc FILE CODE
clean() { hasnt "$1" 'Completion with error|Bad wc status|Couldn.t|Failed|mismatch'; }
# perftest separates the last bandwidth column with tabs: [[:space:]], not " +"
S='[[:space:]]+'
BW_LINE="^ 4096${S}20${S}[0-9.]+${S}[0-9.]+${S}[0-9.]+"
LAT_LINE="^ 64${S}100${S}[0-9.]+"

our_server() {  # our_server NAME PORT args...: one of our ib_* servers on 127.0.0.1, NAME.log; finish_server NAME
  local name=$1 port=$2; shift 2
  # a last resort only: finish_server ends a server that outlives its run, so a slow start costs no check
  timeout 600 java -jar "$JAR" "$@" -R -p "$port" --bind 127.0.0.1 > "$DIR/$name.log" 2>&1 &
  PIDS+=($!); eval "PID_${name//-/_}=$!"
}
finish_server() {  # finish_server NAME [GRACE]: up to GRACE s (30) for it to exit, then ends it; writes NAME.rc
  local pid rc=0 i; eval "pid=\$PID_${1//-/_}"
  for i in $(seq $((${2:-30} * 5))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -TERM "$pid" 2>/dev/null || true  # still running after its run: it exits non-zero, its row fails
  wait "$pid" || rc=$?
  echo $rc > "$DIR/$1.rc"
}
await_server() {  # await_server NAME: up to 90 s for its "listening on" line (JVMs start slowly on a loaded host)
  local pid i; eval "pid=\$PID_${1//-/_}"
  for i in $(seq 450); do
    grep -q "listening on" "$DIR/$1.log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  cat "$DIR/$1.log"; echo "perftest: $1 did not start" >&2; exit 1
}
our_client() {  # our_client NAME args...: one of our ib_* clients, NAME.out / NAME.rc
  local name=$1; shift
  # in the background and waited for, so that cleanup can end it too
  timeout 120 java -jar "$JAR" "$@" > "$DIR/$name.out" 2>&1 &
  local pid=$! rc=0; PIDS+=($pid)
  wait $pid || rc=$?
  echo $rc > "$DIR/$name.rc"
  say "  host  $name: $(grep -E '^ [0-9]' "$DIR/$name.out" | tail -1) (exit $(cat "$DIR/$name.rc"))"
}

# ---- C: ours against ours, every size of -a; in the background while the VM part runs (checked at the end)
run_c() {
  local port=$((BASE + 20)) t
  for t in $TESTS; do
    say "C: $t -a -n 3, ours against ours on 127.0.0.1:$port"
    our_server "srv-$t" $port $t -a -n 3; await_server "srv-$t"
    our_client "$t" $t -R -a -n 3 -p $port 127.0.0.1
    finish_server "srv-$t"
  done
  PIDS=()
}
C_PID=
if [[ $PARTS == *C* ]]; then
  mkdir -p "$OUT/loopback"
  ( DIR=$OUT/loopback; PIDS=(); trap cleanup EXIT; run_c ) &
  C_PID=$!; PIDS+=($C_PID)
fi

# ---- A and B: one VM boot
if [[ $PARTS == *A* || $PARTS == *B* ]]; then
  [[ -f $SIWVM_DIR/run.sh ]] || { echo "perftest: no siw-vm harness at $SIWVM_DIR" >&2; exit 2; }
  SIWVM_DIR=$(cd "$SIWVM_DIR" && pwd)
  DIR=${PERFTEST_RECHECK:-$OUT/vm}; mkdir -p "$DIR"
  if [[ -z ${PERFTEST_RECHECK:-} ]]; then  # PERFTEST_RECHECK=DIR: only the checks, on an earlier run's files
    # setup.sh is idempotent but its apt-get update alone can take a minute: with a built VM in the cache
    # (CI runs siw-matrix.sh just before) it is skipped unless PERFTEST_SETUP=1
    if [[ ${PERFTEST_SETUP:-0} == 1 || ! -f ${SIWVM_CACHE:-/var/cache/siw-vm}/initramfs.cpio.gz ]]; then
      say "setting up the siw VM (setup.sh; idempotent)"
      bash "$SIWVM_DIR/setup.sh" > "$DIR/setup.log" 2>&1 || { tail -30 "$DIR/setup.log"; echo "perftest: setup.sh failed" >&2; exit 1; }
    fi

    # A: our servers, one port per test (each serves one run, as perftest's)
    i=0
    for t in $TESTS; do
      case $t in *_bw) args="-s 4096 -n 20";; *) args="-s 64 -n 100";; esac
      eval "PORT_$t=$((BASE + i)); ARGS_$t='$t $args'"
      our_server "srv-$t" $((BASE + i)) $t $args
      i=$((i + 1))
    done
    PORT_neg=$((BASE + 6)); ARGS_neg="ib_send_bw -s 64 -n 20 --timeout 30000"
    our_server srv-neg $PORT_neg $ARGS_neg
    # (the VM boots meanwhile; the guest's part A waits for /host/servers-up, written below)

    # the guest: stock servers for our clients (guest ports 18515..18517, B) in the background while its stock
    # clients (A, each captured) run one after the other; the negative case last, bounded at 30 s (it hangs)
    {
      echo 'set -u'
      # the 2 s after each command: on a loaded host tcpdump may still be behind when the command ends
      # (a stock client whose clock calibration fails cannot report: the host restarts our server, it runs again)
      cat <<'EOF'
run1() { n=$1; p=$2; t=$3; shift 3; siwvm-capture /host/A-$n.pcap eth0 "tcp and ((dst host 10.0.2.2 and dst port $p) or (src host 10.0.2.2 and src port $p))" -- bash -c "timeout $t \"\$@\"; echo \$? > /host/$n.rc; sleep 2" _ "$@" > /host/$n.out 2>&1; }
run() {
  run1 "$@"
  # perftest's own calibration failure (see the top of perftest.sh): its r^2 line, then no report or inf
  if grep -qE "^Correlation coefficient r\^2: .* < 0\.9" /host/$1.out &&
     grep -qE "Can't produce a report|^ *[0-9]+ +[0-9]+ +inf" /host/$1.out; then
    for f in out rc; do mv /host/$1.$f /host/$1.try1.$f; done; mv /host/A-$1.pcap /host/A-$1.try1.pcap; touch /host/$1.retry
    for i in $(seq 300); do [ -e /host/$1.again ] && break; sleep 0.2; done
    run1 "$@"
  fi
  echo "guest $1: exit $(cat /host/$1.rc)"
}
EOF
      if [[ $PARTS == *B* ]]; then
        j=0
        for t in ib_write_bw ib_read_bw ib_send_bw; do
          # a stock server whose clock calibration failed (its r^2 line and "Can't produce a report") runs once
          # more, and our client with it
          echo "( for a in 1 2; do timeout 120 $t -R -d siw0 -s 4096 -n 20 -p $((BASE + 10 + j)) > /host/s-$t.log 2>&1; echo rc=\$? >> /host/s-$t.log; grep -qE '^Correlation coefficient r\\^2: .* < 0\\.9' /host/s-$t.log && grep -q \"Can't produce a report\" /host/s-$t.log || break; [ \$a = 1 ] && mv /host/s-$t.log /host/s-$t.try1.log && touch /host/s-$t.retry; done ) &"
          j=$((j + 1))
        done
        echo 'sleep 1; touch /host/ready'
      fi
      if [[ $PARTS == *A* ]]; then
        echo 'for i in $(seq 900); do [ -e /host/servers-up ] && break; sleep 0.2; done'
        i=0
        for t in $TESTS; do
          case $t in *_bw) args="-s 4096 -n 20";; *) args="-s 64 -n 100";; esac
          echo "run $t $((BASE + i)) 90 $t -R -d siw0 $args -p $((BASE + i)) 10.0.2.2"
          i=$((i + 1))
        done
        echo "run neg $((BASE + 6)) 30 ib_send_bw -R -d siw0 -s 4096 -n 20 -p $((BASE + 6)) 10.0.2.2"
      fi
      echo 'wait; echo guest done'
    } > "$DIR/guest.sh"
    fwd=(--hostfwd $((BASE + 10)):$((BASE + 10)) --hostfwd $((BASE + 11)):$((BASE + 11)) --hostfwd $((BASE + 12)):$((BASE + 12)))
    say "A/B: booting the VM"
    # its own session: a timeout(1) around this script signals our whole process group, and run.sh dying first
    # would orphan its qemu; this way cleanup still finds qemu below run.sh
    setsid bash "$SIWVM_DIR/run.sh" -q --timeout 280 --share "$DIR" "${fwd[@]}" -- 'bash /host/guest.sh' > "$DIR/vm.log" 2>&1 &
    vm=$!; PIDS+=($vm)
    if [[ $PARTS == *A* ]]; then
      for t in $TESTS neg; do await_server "srv-$t"; done
      touch "$DIR/servers-up"
    fi
    restart_asked() {  # our server of a stock client that could not report: once more, for its second run
      local t
      for t in $TESTS neg; do
        if [[ -e $DIR/$t.retry && ! -e $DIR/$t.again ]]; then
          say "A: the stock $t client could not produce a report (its clock calibration); once more"
          finish_server "srv-$t" 0; mv "$DIR/srv-$t.log" "$DIR/srv-$t.try1.log"
          eval "our_server srv-$t \$PORT_$t \$ARGS_$t"; await_server "srv-$t"
          touch "$DIR/$t.again"
        fi
      done
    }
    if [[ $PARTS == *B* ]]; then
      for k in $(seq 1500); do [[ -e $DIR/ready ]] && break; kill -0 $vm 2>/dev/null || break; restart_asked; sleep 0.2; done
      if [[ -e $DIR/ready ]]; then
        j=0
        for t in ib_write_bw ib_read_bw ib_send_bw; do
          restart_asked
          our_client "c-$t" $t -R -s 4096 -n 20 -p $((BASE + 10 + j)) 127.0.0.1
          if ! rc "c-$t.rc" 0; then  # the stock server's clock calibration failed? it runs again
            for k in $(seq 150); do [[ -e $DIR/s-$t.retry ]] && break; sleep 0.2; done
            if [[ -e $DIR/s-$t.retry ]]; then
              say "B: the stock $t server could not produce a report (its clock calibration); once more"
              sleep 2; mv "$DIR/c-$t.out" "$DIR/c-$t.try1.out"
              our_client "c-$t" $t -R -s 4096 -n 20 -p $((BASE + 10 + j)) 127.0.0.1
            fi
          fi
          j=$((j + 1))
        done
      else
        say "B: the guest never got ready"
      fi
    fi
    while kill -0 $vm 2>/dev/null; do restart_asked; sleep 0.5; done
    wait $vm || say "run.sh exit $?"
    sed 's/^/  vm: /' "$DIR/vm.log"
    for t in $TESTS neg; do finish_server "srv-$t"; done
  fi

  if [[ $PARTS == *A* ]]; then
    # the transcript the READMEs' stock ib_write_bw sample is compared with (.ci/run's CI samples step): the command
    # as the guest ran it, then what it printed (without siwvm-capture's packet count)
    if [[ -f $DIR/ib_write_bw.out ]]; then
      { echo "guest\$ ib_write_bw -R -d siw0 -s 4096 -n 20 -p $BASE 10.0.2.2"
        grep -v '^siwvm-capture: ' "$DIR/ib_write_bw.out" || true; } > "$DIR/ib_write_bw.sample"
    fi
    for t in ib_write_bw ib_send_bw; do
      row "$t" "stock $t -R -s 4096 -n 20 -> ours: result line, rc 0, no error words" \
        'rc $t.rc 0' 'has $t.out "$BW_LINE"' 'clean $t.out' 'rc srv-$t.rc 0'
    done
    row ib_read_bw "stock ib_read_bw -R -s 4096 -n 20 -> ours: result line, Outstand reads 128, rc 0" \
      'rc ib_read_bw.rc 0' 'has ib_read_bw.out "$BW_LINE"' 'has ib_read_bw.out "Outstand reads  : 128"' \
      'clean ib_read_bw.out' 'rc srv-ib_read_bw.rc 0'
    for t in ib_write_lat ib_read_lat ib_send_lat; do
      row "$t" "stock $t -R -s 64 -n 100 -> ours: latency line under its header, rc 0" \
        'rc $t.rc 0' 'has $t.out "#bytes #iterations    t_min\[usec\]"' 'has $t.out "$LAT_LINE"' 'clean $t.out' \
        'rc srv-$t.rc 0'
    done
    # siw's client has usually completed its Sends locally when our Terminate comes, then waits for credits
    # that never come: it fails by its timeout rather than with "Completion with error" (digest 6.5 saw that
    # between two siw ends on lo)
    row neg "stock ib_send_bw -s 4096 -> ours -s 64: our Terminate 1/2/0x05 and one error line, both fail (ours by itself)" \
      '! rc neg.rc 0' 'has srv-neg.log "DDP message too long for available buffer; sending Terminate 1/2/0x05"' \
      'has srv-neg.log "^ib_send_bw: Completion with error at server"' '! rc srv-neg.rc 0' \
      '! rc srv-neg.rc 143' '! rc srv-neg.rc 124'
    # wire shape (digest section 6.4): 2 conversations, MPA 10 02 0004, control Sends per direction, credits
    # Wireshark's iwarp_mpa / iwarp_ddp_rdmap dissectors (as interop/wire-check.sh) on the capture $pcap. MPA is
    # found by its heuristic, asked first: a client's ephemeral port may be another protocol's registered one
    # (44818 is EtherNet/IP's), whose dissector would otherwise claim the stream and hide its FPDUs
    tsk() { tshark -n -o tcp.try_heuristic_first:TRUE -r "$pcap" --disable-protocol rpcordma --disable-protocol smb_direct "$@" 2>/dev/null; }
    i=0
    for t in $TESTS; do
      pcap=$DIR/A-$t.pcap port=$((BASE + i)); i=$((i + 1))
      # one line per TCP conversation, its two ends; shown when the row fails
      tshark -n -r "$pcap" -T fields -e tcp.stream -e ip.src -e tcp.srcport -e ip.dst -e tcp.dstport 2>/dev/null \
        | awk '!seen[$1]++ {print $1, $2 ":" $3, $4 ":" $5}' > "$DIR/wire-$t.conversations" || true
      tshark -n -r "$pcap" -T fields -e tcp.stream -e tcp.srcport -e tcp.payload 2>/dev/null > "$DIR/A-$t.fields" || true
      tsk -Y 'iwarp_rdma.opcode == 3 && tcp.stream == 0' -T fields -e tcp.stream -e tcp.srcport -e iwarp_rdma.opcode \
        | awk '{n = split($3, a, ","); c[$1 " " $2] += n} END {for (k in c) print k, c[k]}' | sort > "$DIR/A-$t.sends" \
        || true  # no capture (the guest ran out of time): the row fails, the other rows still run
      case $t in ib_write_bw|ib_read_bw) want=16;; ib_write_lat) want=10;; *) want=11;; esac
      convs=$(cut -f1 "$DIR/A-$t.fields" | sort -u | grep -c . || true)
      mpa=$(grep -c -E $'\t4d504120494420(526571|526570)204672616d6510020004' "$DIR/A-$t.fields" || true)
      fpdus=$(tsk -Y iwarp_mpa.fpdu -T fields -E occurrence=a -E aggregator=, -e iwarp_mpa.ulpdulength | tr , '\n' | grep -c . || true)
      bad=$(tsk -Y '_ws.malformed || _ws.expert.severity >= 8388608' | grep -c . || true)
      ours=$(grep -c -E " 10\.0\.2\.2:$port( |\$)" "$DIR/wire-$t.conversations" || true)
      checks=('[[ $fpdus -gt 0 && $bad -eq 0 ]]' '[[ $convs -eq 2 && $ours -eq 2 ]]' '[[ $mpa -eq 4 ]]'
              '[[ $(wc -l < $DIR/A-$t.sends) -eq 2 ]]' 'awk -v w=$want "\$3 != w {exit 1}" $DIR/A-$t.sends')
      what="wire of $t: FPDUs decoded by tshark, none malformed, no expert error, 2 conversations (both with our server's port), 4 MPA frames 10 02 0004, $want control Sends each way on A"
      if [[ $t == ib_read_bw ]]; then
        checks+=('grep -q -E $'"'"'\t4d504120494420526570204672616d651002000400800080'"'"' $DIR/A-$t.fields')
        what="$what, Reply IRD/ORD 128 on B"
      fi
      if [[ $t == ib_send_bw ]]; then
        credits=$(tsk -Y 'iwarp_rdma.opcode == 0' -T fields -e iwarp_rdma.opcode | tr , '\n' | grep -c . || true)
        # each a 4-octet little-endian receive count, from our server's port: 0012 c1 40 STag TO count
        counts=$(awk -v p=$port '$2 == p {print $3}' "$DIR/A-$t.fields" | grep -o -E '0012c140[0-9a-f]{24}[0-9a-f]{8}' \
          | cut -c33-40 | paste -sd' ' || true)
        checks+=('[[ $credits -eq 4 ]]' '[[ $counts == "06000000 0c000000 12000000 14000000" ]]')
        what="$what, 4 credit Writes (counts 6, 12, 18, 20)"
      fi
      row "wire-$t" "$what" "${checks[@]}"
    done
  fi
  if [[ $PARTS == *B* ]]; then
    for t in ib_write_bw ib_read_bw; do
      row "s-$t" "ours $t -s 4096 -n 20 -> stock server: it prints our report, rc 0" \
        'rc c-$t.rc 0' 'has c-$t.out "$BW_LINE"' 'has s-$t.log "$BW_LINE"' 'has s-$t.log "^rc=0"' 'clean s-$t.log'
    done
    row s-ib_send_bw "ours ib_send_bw -s 4096 -n 20 -> stock server: its own result line, rc 0" \
      'rc c-ib_send_bw.rc 0' 'has c-ib_send_bw.out "$BW_LINE"' 'has s-ib_send_bw.log "$BW_LINE"' \
      'has s-ib_send_bw.log "^rc=0"' 'clean s-ib_send_bw.log'
  fi
fi

if [[ -n $C_PID ]]; then
  wait $C_PID || say "C: exit $?"
  DIR=$OUT/loopback
  for t in $TESTS; do
    row "C-$t" "ours -> ours, $t -R -a -n 3: 23 sizes, 2 .. 8388608, both ends exit 0" \
      'rc $t.rc 0' 'rc srv-$t.rc 0' '[[ $(grep -c -E "^ [0-9]+${S}3${S}[0-9.]+" $DIR/$t.out) -eq 23 ]]' \
      'has $t.out "^ 8388608${S}3${S}"'
  done
fi

PIDS=()  # all waited for: their ids may belong to others by now
echo
printf '%s\n' "${ROWS[@]}"
echo "perftest: $PASS passed, $FAIL failed ($((SECONDS - T0)) s)"
[[ $FAIL -eq 0 ]]
