#!/usr/bin/env bash
# check.sh - the IFT and SCTP DDP Lua dissectors (ift.lua, sctp_ddp.lua) held against tshark.
#
# Usage:
#   interop/wireshark/check.sh vectors           known answers: the committed captures built from the
#                                                 drafts' vectors (make-vectors.py) decode to the
#                                                 digests' values; corrupted frames are flagged
#   interop/wireshark/check.sh ift JAR           our own --wire ift traffic (serve, ping, bench with
#                                                 every CRC choice, and the two short connections on
#                                                 which bench asks serve for its CPU cost) captured on
#                                                 lo, then `capture IFT`
#   interop/wireshark/check.sh sctp PCAP         a capture of our --wire sctp traffic (the SCTP guest's)
#   interop/wireshark/check.sh all JAR           vectors, ift JAR and sctp on the committed
#                                                 sctp-guest.pcap
# A capture passes when every frame is decoded (IFT: the PDUs account for every TCP payload octet;
# SCTP: every DATA chunk carries a decoded extension), nothing is malformed, no expert error is
# raised, and every CRC present was verified good.
# Environment: IFT_CHECK_PORT (serve's port for `ift`, default 27450), IFT_CHECK_DIR (keep files). A failed
# `ift` lists the segments it could not place (with TCP's own analysis of them) and keeps the capture.
# `ift` needs root (or dumpcap's capabilities) to capture on lo; installs tshark when missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fail=0
ok()  { echo "  ok    $*"; }
bad() { echo "  FAIL  $*"; fail=1; }

if ! command -v tshark >/dev/null 2>&1 || ! command -v dumpcap >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
    apt-get update -q
    apt-get install -y -q --no-install-recommends tshark
fi

# Wireshark's RPC-over-RDMA heuristic claims short Sends ("hello") behind any iWARP framing and
# then reports them malformed; it is not what is being checked here.
# A tshark that fails (a filter or field it does not know) fails the whole check, so that no count
# below can pass by being empty.
# SCTP checksums are verified in the vectors only: Linux leaves them to (absent) offload on loopback,
# so a live capture on lo carries none.
sctp_checksum=none
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ts() {
    if ! tshark -X "lua_script:$here/ift.lua" -X "lua_script:$here/sctp_ddp.lua" \
            --disable-heuristic rpcrdma_iwarp -o "sctp.checksum:$sctp_checksum" "$@" 2>"$scratch/err"; then
        echo "tshark $* failed: $(grep -v 'Running as' "$scratch/err")" >&2
        touch "$scratch/tshark-failed"
    fi
}

# count FILE FILTER: frames matching a display filter (two passes, so reassembly is complete)
count() { ts -2 -r "$1" -Y "$2" -T fields -e frame.number | grep -c . || true; }
# occurrences FILE FIELD: how many values of FIELD the whole capture holds
occurrences() { ts -2 -r "$1" -T fields -E occurrence=a -E aggregator=/s -e "$2" | tr ' ' '\n' | grep -c . || true; }

expect_eq() { # what got want
    if [ "$2" = "$3" ]; then ok "$1: $2"; else bad "$1: got '$2', want '$3'"; fi
}

common_checks() { # file label
    local f=$1
    expect_eq "$2: malformed frames" "$(count "$f" '_ws.malformed')" 0
    expect_eq "$2: frames with an expert error" "$(count "$f" '_ws.expert.severity == error')" 0
    expect_eq "$2: Lua errors" "$(count "$f" '_ws.expert.message contains "Lua Error"')" 0
}

check_ift_capture() { # file label [frames expected without their indication]
    local f=$1 label=$2 want_assumed=${3:-0}
    echo "$label: $f"
    local tcp_octets ift_octets
    tcp_octets=$(ts -2 -r "$f" -Y 'tcp.len > 0' -T fields -e tcp.len | awk '{s += $1} END {print s + 0}')
    ift_octets=$(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e ift.length \
        | tr ' ' '\n' | awk '{s += $1} END {print s + 0}')
    [ "$tcp_octets" -gt 0 ] || bad "$label: no TCP payload in the capture"
    expect_eq "$label: TCP payload octets decoded as IFT PDUs (of $tcp_octets)" "$ift_octets" "$tcp_octets"
    local unplaced='tcp.len > 0 && !ift && !tcp.reassembled_in'
    expect_eq "$label: TCP segments with payload neither IFT nor part of a reassembled PDU" "$(count "$f" "$unplaced")" 0
    if [ "$(count "$f" "$unplaced")" != 0 ]; then # what they were: stream, ports, length, TCP's own analysis
        ts -2 -r "$f" -Y "$unplaced" -T fields -e frame.number -e tcp.stream -e tcp.srcport -e tcp.dstport \
            -e tcp.len -e tcp.analysis.flags -e _ws.col.Info | sed -n '1,20s/^/        /p'
    fi
    local ai frames hgood pgood hbad pbad assumed
    ai=$(occurrences "$f" ift.ai.magic)
    frames=$(occurrences "$f" ift.header_size)
    hgood=$(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e ift.hcrc.status | tr ' ' '\n' | grep -c '^1$' || true)
    pgood=$(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e ift.pcrc.status | tr ' ' '\n' | grep -c '^1$' || true)
    hbad=$(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e ift.hcrc.status | tr ' ' '\n' | grep -c '^0$' || true)
    pbad=$(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e ift.pcrc.status | tr ' ' '\n' | grep -c '^0$' || true)
    assumed=$(count "$f" 'ift.assumed')
    echo "  $label: $ai adaption indications, $frames frames; header CRC good $hgood bad $hbad," \
        "payload CRC good $pgood bad $pbad"
    expect_eq "$label: indication CRCs good" "$(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e ift.ai.crc.status | tr ' ' '\n' | grep -c '^1$' || true)" "$ai"
    expect_eq "$label: bad header/payload CRCs" "$hbad/$pbad" 0/0
    expect_eq "$label: frames whose CRC presence was assumed (indication not captured)" "$assumed" "$want_assumed"
    expect_eq "$label: IFT frames handed to iwarp_ddp_rdmap" "$(occurrences "$f" iwarp_ddp.control_field)" "$frames"
    common_checks "$f" "$label"
}

check_sctp_capture() { # file label
    local f=$1 label=$2
    echo "$label: $f"
    local data ext
    data=$(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e sctp.chunk_type | tr ' ' '\n' | grep -c '^0$' || true)
    ext=$(occurrences "$f" sctp_ddp.mode)
    [ "$data" -gt 0 ] || bad "$label: no DATA chunk in the capture"
    expect_eq "$label: DATA chunks with a decoded placement extension (of $data)" "$ext" "$data"
    expect_eq "$label: extensions whose layout was assumed (INIT/INIT-ACK not captured)" \
        "$(count "$f" 'sctp_ddp.assumed')" 0
    expect_eq "$label: INIT/INIT-ACK indications named" \
        "$(occurrences "$f" sctp_ddp_indication.value)" "$(occurrences "$f" sctp.adaptation_layer_indication)"
    echo "  $label: modes $(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e sctp_ddp.mode | tr ' ' '\n' | grep . | sort | uniq -c | awk '{printf "%s x%s ", $2, $1}')"
    echo "  $label: RDMAP opcodes $(ts -2 -r "$f" -T fields -E occurrence=a -E aggregator=/s -e iwarp_rdma.opcode | tr ' ' '\n' | grep . | sort | uniq -c | awk '{printf "%s x%s ", $2, $1}')"
    common_checks "$f" "$label"
}

check_vectors() {
    local d
    sctp_checksum=CRC-32C
    d=$(mktemp -d)
    python3 "$here/make-vectors.py" "$d"
    for v in ift-vectors.pcap ift-corrupt.pcap sctp-vectors.pcap; do
        cmp -s "$d/$v" "$here/$v" && ok "$v matches make-vectors.py" || bad "$v differs from make-vectors.py's output"
    done
    rm -rf "$d"
    echo "known answers: ift-vectors.pcap"
    # one line per IFT PDU: header_size payload_size VTag hcrc/status pcrc/status RDMAP opcode
    local got
    got=$(ts -2 -r "$here/ift-vectors.pcap" -Y ift -T fields -E occurrence=a -E aggregator=/s \
        -e ift.header_size -e ift.payload_size -e ift.vtag -e ift.hcrc -e ift.hcrc.status -e ift.pcrc \
        -e ift.pcrc.status -e iwarp_rdma.opcode -e ift.ai.vtag -e ift.ai.flags -e ift.ai.crc.status)
    diff <(echo "$got") "$here/ift-vectors.expected" >/dev/null \
        && ok "fields of AI-1..AI-3, F1..F6 as ift-vectors.expected" \
        || { bad "fields differ from ift-vectors.expected:"; diff <(echo "$got") "$here/ift-vectors.expected" || true; }
    check_ift_capture "$here/ift-vectors.pcap" "vectors" 1 # connection 4 deliberately
    echo "known answers: ift-corrupt.pcap"
    expect_eq "corrupt: bad payload CRC in frame" "$(ts -r "$here/ift-corrupt.pcap" -Y 'ift.pcrc.status == 0' -T fields -e frame.number)" 6
    expect_eq "corrupt: bad header CRC in frame" "$(ts -r "$here/ift-corrupt.pcap" -Y 'ift.hcrc.status == 0' -T fields -e frame.number)" 7
    expect_eq "corrupt: VTag error in frame" "$(ts -r "$here/ift-corrupt.pcap" -Y 'ift.vtag.bad' -T fields -e frame.number)" 8
    echo "known answers: sctp-vectors.pcap"
    got=$(ts -2 -r "$here/sctp-vectors.pcap" -Y 'sctp_ddp || sctp_ddp_indication' -T fields \
        -e sctp_ddp_indication.value -e sctp_ddp.indication -e sctp_ddp.mode -e sctp_ddp.flags \
        -e sctp_ddp.tag -e sctp_ddp.offset -e sctp_ddp.aws -e iwarp_rdma.opcode -e sctp_ddp.data)
    diff <(echo "$got") "$here/sctp-vectors.expected" >/dev/null \
        && ok "fields of the 0xC006 parameters and S1..S6 as sctp-vectors.expected" \
        || { bad "fields differ from sctp-vectors.expected:"; diff <(echo "$got") "$here/sctp-vectors.expected" || true; }
    expect_eq "vectors: SCTP checksums verified good" "$(count "$here/sctp-vectors.pcap" 'sctp.checksum.status == 1')" 10
    check_sctp_capture "$here/sctp-vectors.pcap" "vectors"
    sctp_checksum=none
}

capture_ift() { # jar
    local jar=$1 port=${IFT_CHECK_PORT:-27450} dir
    [ -f "$jar" ] || { echo "check.sh: no jar at $jar" >&2; exit 2; }
    if [ -n "${IFT_CHECK_DIR:-}" ]; then dir=$IFT_CHECK_DIR; mkdir -p "$dir"; else dir=$(mktemp -d); fi
    local pcap=$dir/ift-own.pcapng
    rm -f "$pcap"
    dumpcap -q -B 64 -i lo -f "tcp port $port" -w "$pcap" >"$dir/dumpcap.log" 2>&1 &
    local dp=$!
    for _ in $(seq 100); do [ -s "$pcap" ] && break; sleep 0.1; done
    sleep 0.5
    java -jar "$jar" serve --wire ift --address 127.0.0.1 --port "$port" 2>"$dir/serve.log" &
    local serve=$!
    for _ in $(seq 200); do grep -q "listening" "$dir/serve.log" && break; sleep 0.1; done
    local rc=0 b="bench 127.0.0.1:$port --wire ift --warmup 1 --depth 1"
    {
        timeout 60 java -jar "$jar" ping "127.0.0.1:$port" --wire ift -C 2 -S 3000
        for crcs in header,payload header payload none; do
            timeout 60 java -jar "$jar" $b --op write --size 4096 --iterations 3 --ift-send-crc $crcs
        done
        timeout 60 java -jar "$jar" $b --op read --size 70000 --iterations 2
        timeout 60 java -jar "$jar" $b --op send --size 100 --iterations 3 --ift-send-crc payload
    } >"$dir/clients.log" 2>&1 || rc=$?
    sleep 0.5
    kill $serve; wait $serve 2>/dev/null || true
    kill -INT $dp; wait $dp || true
    [ "$rc" = 0 ] || { tail -20 "$dir/clients.log"; bad "our clients exited $rc"; }
    local drops
    drops=$(sed -n 's/.*dropped on interface.*: [0-9]*\/\([0-9]*\) .*/\1/p' "$dir/dumpcap.log")
    expect_eq "capture: packets dropped by the kernel" "${drops:-?}" 0
    check_ift_capture "$pcap" "capture IFT"
    echo "  capture IFT: RDMAP opcodes $(ts -2 -r "$pcap" -T fields -E occurrence=a -E aggregator=/s -e iwarp_rdma.opcode | tr ' ' '\n' | grep . | sort | uniq -c | awk '{printf "%s x%s ", $2, $1}')"
    if [ -z "${IFT_CHECK_DIR:-}" ]; then
        if [ "$fail" = 0 ]; then rm -rf "$dir"; else echo "  capture IFT: kept in $dir"; fi
    fi
}

echo "check.sh: $(tshark -v 2>/dev/null | sed -n 1p)"
case "${1:-}" in
    vectors) check_vectors ;;
    ift) capture_ift "${2:?usage: check.sh ift JAR}" ;;
    sctp) check_sctp_capture "${2:?usage: check.sh sctp PCAP}" "capture SCTP" ;;
    all)
        check_vectors
        capture_ift "${2:?usage: check.sh all JAR}"
        check_sctp_capture "$here/sctp-guest.pcap" "committed SCTP guest capture"
        ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
esac
[ ! -e "$scratch/tshark-failed" ] || bad "tshark failed (above)"
if [ "$fail" = 0 ]; then echo "check.sh: OK"; else echo "check.sh: FAILED"; fi
exit "$fail"
