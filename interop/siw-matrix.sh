#!/usr/bin/env bash
# siw-matrix.sh - live interop of our jar with the Linux kernel's siw driver, both roles, in a VM.
#
# Usage: interop/siw-matrix.sh [path/to/iwarp-server.jar]
# Env:   SIWVM_DIR   the siw-vm harness (default: ../shared/interop/siw-vm beside the checkout)
#        SIW_MATRIX_OUT  where logs go (default: target/siw-matrix)
#        SIW_MATRIX_PROFILES  which VM boots to run (default: "stock crc p2p rev1")
#
# One VM boot per siw build ("profile"). In each boot the guest first runs its clients (rping -c,
# rdma_client) against our serve on the host (10.0.2.2 in the guest), then starts its servers
# (rping -s -P, rdma_server) behind --hostfwd and our clients (ping, probe, sendrecv) connect to
# them. Every scenario is one row of the matrix printed at the end; exit 1 if any row failed.
# Needs root (setup.sh installs qemu and builds the VM, about a minute the first time).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/iwarp-server/src/test/wait-listening.sh"
JAR=$(cd "$(dirname "${1:-$ROOT/iwarp-server/target/iwarp-server.jar}")" && pwd)/$(basename "${1:-iwarp-server.jar}")
SIWVM_DIR=${SIWVM_DIR:-$ROOT/../shared/interop/siw-vm}
OUT=${SIW_MATRIX_OUT:-$ROOT/target/siw-matrix}
PROFILES=${SIW_MATRIX_PROFILES:-stock crc p2p rev1}
# host ports: our serve (default), our serve --crc (rev1: serve --echo); forwards to the guest's rping -s and
# rdma_server
P_SERVE=17274 P_SERVE_CRC=17275 P_RPING_S=17276 P_RDMA_SERVER=17277

[[ -f $JAR ]] || { echo "siw-matrix: no jar at $JAR (run mvn package first)" >&2; exit 2; }
[[ -x $SIWVM_DIR/run.sh || -f $SIWVM_DIR/run.sh ]] || { echo "siw-matrix: no siw-vm harness at $SIWVM_DIR" >&2; exit 2; }
SIWVM_DIR=$(cd "$SIWVM_DIR" && pwd)
rm -rf "$OUT"; mkdir -p "$OUT"
T0=$SECONDS
say() { printf '[siw-matrix %4ss] %s\n' $((SECONDS - T0)) "$*"; }

say "setting up the siw VM (setup.sh; idempotent)"
bash "$SIWVM_DIR/setup.sh" > "$OUT/setup.log" 2>&1 || { tail -30 "$OUT/setup.log"; echo "siw-matrix: setup.sh failed" >&2; exit 1; }
tail -1 "$OUT/setup.log"

ROWS=() PASS=0 FAIL=0 PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# row PROFILE SCENARIO "what" CHECK... : CHECK is a command; the row passes when it succeeds
row() {
  local profile=$1 name=$2 what=$3; shift 3
  local verdict=FAIL
  if "$@" 2>/dev/null; then verdict=PASS; PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); fi
  ROWS+=("$(printf '%-6s %-22s %-4s %s' "$profile" "$name" "$verdict" "$what")")
  if [[ $verdict == FAIL ]]; then
    echo "---- FAIL $profile/$name: $what; its output:"
    for f in "$DIR/$name".{out,rc} "$DIR"/serve*.log "$DIR"/guest-*.log; do
      [[ -f $f ]] && tail -25 "$f" | sed "s|^|    $(basename "$f"): |"
    done
  fi
}
has() { grep -q -E -- "$2" "$DIR/$1"; }            # has FILE REGEX
count() { [[ $(grep -c -E -- "$2" "$DIR/$1") -eq $3 ]]; }  # count FILE REGEX N
rc() { [[ $(cat "$DIR/$1.rc" 2>/dev/null) == "$2" ]]; }   # rc SCENARIO CODE
all() { local c; for c in "$@"; do eval "$c" || return 1; done; }

start_serve() {  # start_serve NAME PORT [options]: our server on 127.0.0.1
  local name=$1 port=$2; shift 2
  java -jar "$JAR" serve --address 127.0.0.1 --port "$port" "$@" > "$DIR/$name.log" 2>&1 &
  PIDS+=($!); eval "PID_${name//-/_}=$!"
  wait_listening $! "$DIR/$name.log" "siw-matrix: $name"
}
stop_serve() {  # stop_serve NAME: SIGTERM and wait for the clean shutdown line
  local pid; eval "pid=\$PID_${1//-/_}"; kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
}
host_client() {  # host_client NAME args...: our jar as a client, output NAME.out, exit code NAME.rc
  local name=$1; shift
  set +e; timeout 60 java -jar "$JAR" "$@" > "$DIR/$name.out" 2>&1; echo $? > "$DIR/$name.rc"; set -e
  # NAME.sample: the command as the READMEs write it, then its output (.ci/run compares the marked samples with it)
  { echo "\$ java -jar iwarp-server.jar $*"; cat "$DIR/$name.out"; } > "$DIR/$name.sample"
  say "  host  $name: $(tail -1 "$DIR/$name.out") (exit $(cat "$DIR/$name.rc"))"
}

# The guest's part: its clients against our serve, then its servers for our clients.
# GUEST_CLIENTS: lines "NAME command..." ; GUEST_SERVERS: shell to start servers in the background.
guest_script() {
  cat <<'EOF'
set -u
run() { n=$1; shift; timeout 60 "$@" > /host/$n.out 2>&1; echo $? > /host/$n.rc; echo "guest $n: exit $(cat /host/$n.rc)"; }
EOF
  printf '%s\n' "$GUEST_CLIENTS"
  cat <<'EOF'
rping -s -P -a 0.0.0.0 -p 7174 -S 65535 -v > /host/guest-rping-s.log 2>&1 & RS=$!
EOF
  [[ -n ${GUEST_RDMA_SERVER:-} ]] && echo 'rdma_server -p 7471 > /host/guest-rdma_server.log 2>&1 & RD=$!'
  cat <<'EOF'
sleep 1; touch /host/ready
for i in $(seq 1500); do [ -e /host/done ] && break; sleep 0.2; done
kill $RS 2>/dev/null; wait $RS 2>/dev/null
[ -n "${RD:-}" ] && { kill $RD 2>/dev/null; wait $RD 2>/dev/null; }
dmesg | grep -i -E 'siw|iwarp' > /host/guest-dmesg.log
echo guest done
EOF
}

boot() {  # boot PROFILE [--siw-param N=V]: runs the guest script and, once it is ready, HOST_CLIENTS
  local profile=$1; shift
  DIR=$OUT/$profile; mkdir -p "$DIR"
  guest_script > "$DIR/guest.sh"
  say "$profile: booting the VM${*:+ ($*)}"
  bash "$SIWVM_DIR/run.sh" -q --timeout 300 --share "$DIR" --hostfwd "$P_RPING_S:7174" \
    --hostfwd "$P_RDMA_SERVER:7471" "$@" -- \
    'siwvm-capture /host/wire.pcap eth0 tcp -- bash /host/guest.sh' > "$DIR/vm.log" 2>&1 &
  local vm=$! i
  PIDS+=($vm)
  for i in $(seq 900); do [[ -e $DIR/ready ]] && break; kill -0 $vm 2>/dev/null || break; sleep 0.2; done
  if [[ -e $DIR/ready ]]; then
    host_clients
  else
    say "$profile: the guest never got ready"
  fi
  touch "$DIR/done"
  wait $vm || say "$profile: run.sh exit $?"
  sed 's/^/  vm: /' "$DIR/vm.log"
}

# Wireshark's iwarp_mpa / iwarp_ddp_rdmap dissectors over the boot's whole capture (every connection
# between siw and us, both roles): FPDUs decoded, no malformed packet, no expert error, no bad CRC.
# RPC-over-RDMA and SMB Direct heuristics misread small Sends: off, as pcap-summary.sh does. MPA's heuristic goes
# before port-based dissectors: an ephemeral port may be another protocol's registered one (44818: EtherNet/IP).
tsk() { tshark -n -o tcp.try_heuristic_first:TRUE -r "$DIR/wire.pcap" --disable-protocol rpcordma --disable-protocol smb_direct "$@" 2>/dev/null; }
nlines() { grep -c "${1:-.}" || true; }  # a count that is not an error when 0
wire_row() {  # wire_row PROFILE CRC(on|off|mixed)
  local fpdus malformed experr good bad
  [[ -s $DIR/wire.pcap ]] || { row "$1" wire "no capture" false; return; }
  fpdus=$(tsk -Y iwarp_mpa.fpdu -T fields -E occurrence=a -E aggregator=, -e iwarp_mpa.ulpdulength | tr , '\n' | nlines)
  malformed=$(tsk -Y _ws.malformed | nlines)
  experr=$(tsk -Y '_ws.expert.severity >= 8388608' | nlines)
  good=$(tsk -Y iwarp_mpa.crc_check -V | nlines 'Good CRC32')
  bad=$(tsk -Y iwarp_mpa.crc_check -V | grep -c -i -E 'Bad CRC32|incorrect' || true)
  tsk -Y iwarp_rdma -T fields -E occurrence=a -E aggregator=, -e iwarp_rdma.opcode | tr , '\n' | sort | uniq -c \
    | awk '{printf "%s x%s  ", $2, $1}' > "$DIR/wire.opcodes"
  printf '%s FPDUs, %s malformed, %s expert errors, CRC %s good / %s bad; opcodes: %s\n' "$fpdus" "$malformed" \
    "$experr" "$good" "$bad" "$(cat "$DIR/wire.opcodes")" > "$DIR/wire.out"
  say "  wire  $(cat "$DIR/wire.out")"
  local crc_ok='[[ $bad -eq 0 ]]'
  [[ $2 == on ]] && crc_ok='[[ $bad -eq 0 && $good -eq $fpdus ]]'
  [[ $2 == mixed ]] && crc_ok='[[ $bad -eq 0 && $good -gt 0 ]]'
  row "$1" wire "tshark: $fpdus FPDUs, 0 malformed, 0 expert errors, CRC $2 with 0 bad" \
    all '[[ $fpdus -gt 0 && $malformed -eq 0 && $experr -eq 0 ]]' "$crc_ok"
}

for profile in $PROFILES; do
  case $profile in
  stock)  # siw as built upstream: Rev 2, CRC off, no peer-to-peer
    DIR=$OUT/stock; mkdir -p "$DIR"
    start_serve serve $P_SERVE; start_serve serve-crc $P_SERVE_CRC --crc
    GUEST_CLIENTS="
run rping-c rping -c -a 10.0.2.2 -p $P_SERVE -C 10 -v -V
run rping-c-serve-crc rping -c -a 10.0.2.2 -p $P_SERVE_CRC -C 10 -v -V
run rping-c-large rping -c -a 10.0.2.2 -p $P_SERVE -C 10 -S 65535 -V
timeout -s KILL 2 rping -c -a 10.0.2.2 -p $P_SERVE -C 0 > /host/rping-c-killed.out 2>&1; echo \$? > /host/rping-c-killed.rc
run rping-c-after rping -c -a 10.0.2.2 -p $P_SERVE -C 3 -v -V"
    host_clients() {
      host_client ping ping 127.0.0.1:$P_RPING_S -C 10 -v -V
      host_client ping-crc ping 127.0.0.1:$P_RPING_S -C 10 -v -V --crc
      host_client ping-large ping 127.0.0.1:$P_RPING_S -C 10 -S 65535 -v -V
      host_client probe-markers probe 127.0.0.1:$P_RPING_S --case markers
      host_client probe-write probe 127.0.0.1:$P_RPING_S --case write-invalid-stag
      host_client probe-read probe 127.0.0.1:$P_RPING_S --case read-invalid-stag
      host_client probe-send probe 127.0.0.1:$P_RPING_S --case send-too-long --size 64
      host_client ping-after ping 127.0.0.1:$P_RPING_S -C 3 -v -V
    }
    boot stock
    stop_serve serve; stop_serve serve-crc
    row stock rping-c "siw rping -c -C 10 -V -> serve: 10 pings, CRC off" \
      all 'rc rping-c 0' 'count rping-c.out "^ping data: rdma-ping-" 10' \
          'has serve.log "connected: MPA Rev 2, CRC off, IRD 1 ORD 1, MULPDU"' \
          'has serve.log "10 Reads \(640 octets\), 10 Writes \(640 octets\), 20 Sends"'
    row stock rping-c-serve-crc "siw rping -c -> serve --crc: CRC on both ways" \
      all 'rc rping-c-serve-crc 0' 'count rping-c-serve-crc.out "^ping data: rdma-ping-" 10' \
          'has serve-crc.log "connected: MPA Rev 2, CRC on"' 'has serve-crc.log "10 Reads \(640 octets\)"'
    row stock rping-c-large "siw rping -c -S 65535 -> serve: 10 x 65535 octets" \
      all 'rc rping-c-large 0' 'has serve.log "10 Reads \(655350 octets\), 10 Writes \(655350 octets\)"'
    row stock rping-c-killed "rping -c killed mid-run (SIGKILL): serve logs the close, stays up" \
      all 'rc rping-c-killed 137' 'count serve.log "closed: rping session" 4'
    row stock rping-c-after "siw rping -c after the kill: 3 pings" \
      all 'rc rping-c-after 0' 'count rping-c-after.out "^ping data: rdma-ping-" 3'
    row stock serve-shutdown "serve: SIGTERM after 4 siw connections, none refused" \
      has serve.log "stopped after 4 connection\(s\), 0 refused"
    row stock ping "our ping -C 10 -v -> siw rping -s: 10 verified, CRC off" \
      all 'rc ping 0' 'has ping.out "^10/10 pings of 64 octets verified"' 'has ping.out "MPA Rev 2, CRC off"'
    row stock ping-crc "our ping --crc -> siw rping -s: siw echoes C=1, CRC on" \
      all 'rc ping-crc 0' 'has ping-crc.out "^10/10 pings of 64 octets verified"' 'has ping-crc.out "MPA Rev 2, CRC on"'
    row stock ping-large "our ping -S 65535 -> siw rping -s: 10 verified" \
      all 'rc ping-large 0' 'has ping-large.out "^10/10 pings of 65535 octets verified"'
    row stock probe-markers "M=1 Request -> siw rejects (Reply R=1); RFC 5044 wants markers sent" \
      all 'rc probe-markers 3' 'has probe-markers.out "peer rejected the connection \(Reply R=1\)"'
    row stock probe-write "Write to bad STag -> siw Terminate 1/1/0x00 (siw bit order), decoded" \
      all 'rc probe-write 0' 'has probe-write.out "result: AS-RFC: Terminate 1/1/0x00 \(control word in siw.s bit order\)"'
    row stock probe-read "Read of bad STag -> siw Terminate 0/1/0x00 M D R, decoded (MSN field = Read size)" \
      all 'rc probe-read 0' 'has probe-read.out "result: AS-RFC: Terminate 0/1/0x00"' \
          'has probe-read.out " M D R DDP segment length 0 DDP header 414100000000000000010000001000000000 "'
    row stock probe-send "Send 64 > rping's 16-octet receive -> siw 1/2/0x02 (RFC: 0x05)" \
      all 'rc probe-send 3' 'has probe-send.out "result: OTHER: Terminate 1/2/0x02"'
    row stock ping-after "our ping after the hostile probes: siw rping -s still serves" \
      all 'rc ping-after 0' 'has ping-after.out "^3/3 pings of 64 octets verified"'
    wire_row stock mixed
    ;;
  crc)  # siw built with mpa_crc_required=1
    DIR=$OUT/crc; mkdir -p "$DIR"
    start_serve serve $P_SERVE
    GUEST_CLIENTS="
run rping-c rping -c -a 10.0.2.2 -p $P_SERVE -C 10 -v -V
run rping-c-large rping -c -a 10.0.2.2 -p $P_SERVE -C 10 -S 65535 -V"
    host_clients() {
      host_client ping ping 127.0.0.1:$P_RPING_S -C 10 -v -V
      host_client ping-crc ping 127.0.0.1:$P_RPING_S -C 10 -v -V --crc
      host_client ping-crc-large ping 127.0.0.1:$P_RPING_S -C 10 -S 65535 -v -V --crc
    }
    boot crc --siw-param mpa_crc_required=1
    stop_serve serve
    row crc rping-c "siw(crc_required) rping -c -> serve: we echo C=1, CRC on" \
      all 'rc rping-c 0' 'count rping-c.out "^ping data: rdma-ping-" 10' 'has serve.log "connected: MPA Rev 2, CRC on"'
    row crc rping-c-large "siw(crc_required) rping -c -S 65535 -> serve, CRC on" \
      all 'rc rping-c-large 0' 'has serve.log "10 Reads \(655350 octets\), 10 Writes \(655350 octets\)"'
    row crc ping "our ping (C=0) -> siw(crc_required) rping -s: siw echoes C=0, CRC off (siw quirk)" \
      all 'rc ping 0' 'has ping.out "^10/10 pings of 64 octets verified"' 'has ping.out "MPA Rev 2, CRC off"'
    row crc ping-crc "our ping --crc -> siw(crc_required) rping -s: CRC on" \
      all 'rc ping-crc 0' 'has ping-crc.out "^10/10 pings of 64 octets verified"' 'has ping-crc.out "CRC on"'
    row crc ping-crc-large "our ping --crc -S 65535 -> siw(crc_required) rping -s" \
      all 'rc ping-crc-large 0' 'has ping-crc-large.out "^10/10 pings of 65535 octets verified"'
    wire_row crc mixed
    ;;
  p2p)  # siw built with peer_to_peer=1 (RFC 6581 RTR)
    DIR=$OUT/p2p; mkdir -p "$DIR"
    start_serve serve $P_SERVE
    GUEST_CLIENTS="
run rping-c rping -c -a 10.0.2.2 -p $P_SERVE -C 10 -v -V
run rping-c-large rping -c -a 10.0.2.2 -p $P_SERVE -C 10 -S 65535 -V"
    host_clients() {
      host_client ping-p2p ping 127.0.0.1:$P_RPING_S -C 10 -v -V --p2p
      host_client ping-p2p-read ping 127.0.0.1:$P_RPING_S -C 10 -v -V --p2p=read
      host_client ping-p2p-large ping 127.0.0.1:$P_RPING_S -C 10 -S 65535 -v -V --p2p
      host_client ping ping 127.0.0.1:$P_RPING_S -C 10 -v -V
    }
    boot p2p --siw-param peer_to_peer=1
    stop_serve serve
    row p2p rping-c "siw(p2p) rping -c -> serve: Write RTR, 10 pings" \
      all 'rc rping-c 0' 'count rping-c.out "^ping data: rdma-ping-" 10' 'has serve.log "peer-to-peer RTR WRITE"'
    row p2p rping-c-large "siw(p2p) rping -c -S 65535 -> serve" \
      all 'rc rping-c-large 0' 'has serve.log "10 Reads \(655350 octets\), 10 Writes \(655350 octets\)"'
    row p2p ping-p2p "our ping --p2p (Write,Read) -> siw(p2p) rping -s: siw picks Write RTR" \
      all 'rc ping-p2p 0' 'has ping-p2p.out "^10/10 pings of 64 octets verified"' 'has ping-p2p.out "peer-to-peer RTR WRITE"'
    row p2p ping-p2p-read "our ping --p2p=read -> siw(p2p) rping -s: Read RTR" \
      all 'rc ping-p2p-read 0' 'has ping-p2p-read.out "^10/10 pings of 64 octets verified"' 'has ping-p2p-read.out "peer-to-peer RTR READ"'
    row p2p ping-p2p-large "our ping --p2p -S 65535 -> siw(p2p) rping -s" \
      all 'rc ping-p2p-large 0' 'has ping-p2p-large.out "^10/10 pings of 65535 octets verified"'
    row p2p ping "our ping without p2p -> siw(p2p) rping -s: client-server" \
      all 'rc ping 0' 'has ping.out "^10/10 pings of 64 octets verified"'
    wire_row p2p off
    ;;
  rev1)  # siw built with mpa_version=1 (RFC 5044, no IRD/ORD negotiation)
    DIR=$OUT/rev1; mkdir -p "$DIR"
    start_serve serve $P_SERVE; start_serve serve-echo $P_SERVE_CRC --echo
    GUEST_CLIENTS="
run rping-c rping -c -a 10.0.2.2 -p $P_SERVE -C 10 -v -V
run rdma_client rdma_client -s 10.0.2.2 -p $P_SERVE_CRC"
    GUEST_RDMA_SERVER=1
    host_clients() {
      host_client sendrecv sendrecv 127.0.0.1:$P_RDMA_SERVER --mpa-rev 1
      host_client ping ping 127.0.0.1:$P_RPING_S -C 3 -v -V --mpa-rev 1 --timeout 3000
    }
    boot rev1 --siw-param mpa_version=1
    GUEST_RDMA_SERVER=
    stop_serve serve; stop_serve serve-echo
    row rev1 rping-c "siw(rev 1) rping -c -> serve: Rev 1 handshake, 10 pings" \
      all 'rc rping-c 0' 'count rping-c.out "^ping data: rdma-ping-" 10' 'has serve.log "connected: MPA Rev 1, CRC off"'
    row rev1 rdma_client "siw(rev 1) rdma_client -> serve --echo: 16-octet Send exchange" \
      all 'rc rdma_client 0' 'has rdma_client.out "rdma_client: end 0"' 'has serve-echo.log "connected: MPA Rev 1"' \
          'has serve-echo.log "0 Reads \(0 octets\), 0 Writes \(0 octets\), 1 Sends \(1 echoes\)"'
    row rev1 sendrecv "our sendrecv --mpa-rev 1 -> siw(rev 1) rdma_server: Send exchange" \
      all 'rc sendrecv 0' 'has sendrecv.out "MPA Rev 1, CRC off"' 'has sendrecv.out "^1/1 messages of 16 octets answered"'
    row rev1 ping-rping-s "our ping --mpa-rev 1 -> siw(rev 1) rping -s: rping's own Read fails (ORD 0), as documented" \
      all 'rc ping 1' 'has ping.out "MPA Rev 1, CRC off"' 'has guest-rping-s.log "post send error"'
    wire_row rev1 off
    ;;
  *) echo "siw-matrix: unknown profile $profile" >&2; exit 2 ;;
  esac
done

echo
echo "== siw interop matrix (logs in $OUT)"
printf '%-6s %-22s %-4s %s\n' profile scenario "" "what"
printf '%s\n' "${ROWS[@]}"
echo "== siw-matrix took $((SECONDS - T0)) s"
echo "siw-matrix: $PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
