#!/usr/bin/env bash
# Records the QUIC / HTTP/3 sample captures samples/quic-*.pcap and derives their expected numbers
# (samples/derive-quic-expected.py). Run as root from anywhere: sudo samples/make-quic-samples.sh [NAME ...]
# (NAME: h3 retry vn v2 rebind bigch mixed 0rtt keyupdate chacha; default all).
#
# All traffic stays inside two network namespaces made here, trq-cli (10.237.0.1, fd00:237::1) and trq-srv
# (10.237.0.2, fd00:237::2), joined by the veth pair trq-c/trq-s: MTU 1500, TSO/GSO/GRO off. tcpdump
# (`-U -s 0 -w`, filter `udp`) runs on the server end (trq-s). The server is samples/h3-server.py (aioquic)
# on UDP port 443, one server process per capture (its options differ: --retry, --versions, --session-tickets). Clients:
# samples/h3-client.py (aioquic, plain sockets) and, for quic-bigch, Debian's chromium (headless).
# Certificate: self-signed P-256 for quic.test, made at run time (openssl).
#
# Keys, connection IDs, ports and timestamps change on every run: commit captures, key logs, qlogs and
# expected files together.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
work="$here/.work/quic"
NS_C=trq-cli
NS_S=trq-srv
CLI_IP=10.237.0.1
SRV_IP=10.237.0.2
CLI_IP6=fd00:237::1
SRV_IP6=fd00:237::2
PORT=443
PIDS=()
PY=${PYTHON:-python3}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(h3 retry vn v2 rebind bigch mixed 0rtt keyupdate chacha)

for tool in tcpdump tshark editcap openssl ethtool; do
    command -v $tool >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
$PY -c 'import aioquic, pylsqpack' 2>/dev/null || $PY -m pip install --break-system-packages aioquic

cleanup() {
    local rc=$?
    set +e
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    ip netns del $NS_C 2>/dev/null
    ip netns del $NS_S 2>/dev/null
    exit $rc
}
trap cleanup EXIT INT TERM

# ------------------------------------------------------------------------------------ namespaces
ip netns del $NS_C 2>/dev/null || true
ip netns del $NS_S 2>/dev/null || true
ip netns add $NS_C
ip netns add $NS_S
ip link add trq-c netns $NS_C type veth peer name trq-s netns $NS_S
for spec in "$NS_C trq-c $CLI_IP $CLI_IP6" "$NS_S trq-s $SRV_IP $SRV_IP6"; do
    set -- $spec
    ip -n "$1" link set lo up
    ip -n "$1" link set "$2" mtu 1500
    ip -n "$1" addr add "$3/24" dev "$2"
    ip -n "$1" -6 addr add "$4/64" dev "$2" nodad
    ip -n "$1" link set "$2" up
    ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
done
sleep 1
cli() { ip netns exec $NS_C "$@"; }
srv() { ip netns exec $NS_S "$@"; }
sleep 1  # IPv6 addresses are nodad

mkdir -p "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=quic.test" -addext "subjectAltName=DNS:quic.test" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

# record NAME SERVER-OPTIONS -- COMMAND...: server + tcpdump on the server's veth end while COMMAND runs.
# Client key log: samples/NAME.keys (COMMAND writes it); qlogs: .work/quic/NAME/{client,server}/
record() {
    local name=$1
    shift
    local sopts=()
    while [ "$1" != "--" ]; do sopts+=("$1"); shift; done
    shift
    local d="$work/$name"
    rm -rf "$d"
    mkdir -p "$d/client" "$d/server"
    rm -f "$here/$name.pcap"
    ip netns exec $NS_S $PY "$here/h3-server.py" --host $SRV_IP --host6 $SRV_IP6 --port $PORT --cert "$work/cert.pem" \
        --key "$work/key.pem" --keylog "$d/server.keys" --qlog-dir "$d/server" "${sopts[@]}" >"$d/server.log" 2>&1 &
    local server=$!
    PIDS+=($server)
    for i in $(seq 100); do grep -q listening "$d/server.log" && break; sleep 0.1; done
    ip netns exec $NS_S tcpdump -U -Z root -n -s 0 -i trq-s -w "$here/$name.pcap" udp 2>"$d/tcpdump.log" &
    local dump=$!
    PIDS+=($dump)
    for i in $(seq 100); do grep -q "listening on" "$d/tcpdump.log" && break; sleep 0.05; done
    "$@"
    sleep 1
    kill -INT "$dump"; wait "$dump" || true
    sleep 1   # the server ends its connection (draining) and writes its qlog
    kill -TERM "$server"; wait "$server" || true
    chmod 644 "$here/$name.pcap"
    echo "$name.pcap: $(stat -c %s "$here/$name.pcap") bytes"
}
client() {  # client NAME ARGS...
    local name=$1
    shift
    cli $PY "$here/h3-client.py" --server $SRV_IP --port $PORT --keylog "$work/$name/client.keys" \
        --qlog-dir "$work/$name/client" "$@"
}

for n in "${names[@]}"; do
    case $n in
    h3)
        # one connection: GET /small + GET /gzip at once, GET /large, POST /upload (5 000 bytes), GET /small
        record quic-h3 -- client quic-h3 --scenario main ;;
    retry)
        record quic-retry --retry -- client quic-retry --scenario small ;;
    vn)
        # the client's first Initial has the reserved version 0x1a2a3a4a; the server supports only v1
        record quic-vn --versions 0x1 -- client quic-vn --scenario small --version 0x1a2a3a4a --supported 0x1a2a3a4a,0x1 ;;
    v2)
        record quic-v2 -- client quic-v2 --scenario small --version 0x6b3343cf --supported 0x6b3343cf,0x1 ;;
    rebind)
        record quic-rebind -- client quic-rebind --scenario rebind ;;
    bigch)
        if command -v chromium >/dev/null; then
            spki=$(openssl x509 -in "$work/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der \
                | openssl dgst -sha256 -binary | base64)
            bigch() {
                rm -rf "$work/chromium-profile"
                cli chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$work/chromium-profile" \
                    --enable-quic --origin-to-force-quic-on=quic.test:443 \
                    --host-resolver-rules="MAP quic.test $SRV_IP" \
                    --ignore-certificate-errors-spki-list="$spki" \
                    --ssl-key-log-file="$work/quic-bigch/client.keys" \
                    --no-first-run --disable-background-networking --disable-component-update \
                    --disable-sync --disable-default-apps --dump-dom https://quic.test/small \
                    >"$work/quic-bigch/chromium.out" 2>"$work/quic-bigch/chromium.err" || true
            }
            record quic-bigch -- bigch
        else
            record quic-bigch -- client quic-bigch --scenario bigch
        fi
        ;;
    mixed)
        mixed() {
            # two IPv4 connections at the same time (client ports 40001, 40002), a DNS-like exchange on
            # UDP 5353 (48 random bytes out, the same back), one IPv6 connection (client port 40003)
            srv $PY -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("'$SRV_IP'", 5353))
d, a = s.recvfrom(2048)
s.sendto(d, a)' &
            local echo=$!
            client quic-mixed --scenario small --local-port 40001 &
            local a=$!
            client quic-mixed --scenario small --local-port 40002 &
            local b=$!
            wait $a $b
            sleep 0.3
            cli $PY -c '
import random, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 40053))
s.settimeout(3)
s.sendto(random.Random(5353).randbytes(48), ("'$SRV_IP'", 5353))
print("echo:", len(s.recvfrom(2048)[0]))'
            wait $echo
            cli $PY "$here/h3-client.py" --server $SRV_IP6 --port $PORT --keylog "$work/quic-mixed/client.keys" \
                --qlog-dir "$work/quic-mixed/client" --scenario small --local-port 40003
        }
        record quic-mixed -- mixed
        ;;
    0rtt)
        # one client process, two connections (two sockets): GET /small, keep the session ticket; then resume
        # with it: GET /small and GET /gzip in 0-RTT packets, GET /small in 1-RTT
        record quic-0rtt --session-tickets -- client quic-0rtt --scenario 0rtt ;;
    keyupdate)
        # GET /small, GET /medium (80 000 bytes); the client requests key updates after 20 000 and 50 000 body bytes
        record quic-keyupdate -- client quic-keyupdate --scenario keyupdate ;;
    chacha)
        # the client offers TLS_CHACHA20_POLY1305_SHA256 only; GET /small and GET /gzip at once
        record quic-chacha -- client quic-chacha --scenario pair --cipher chacha ;;
    *) echo "unknown sample $n" >&2; exit 1 ;;
    esac
    # qlogs of both ends, kept next to the capture (gzip -n), and the server's key log when the client wrote none
    q="$here/quic-qlog/${n}"
    rm -rf "$q"; mkdir -p "$q"
    for side in client server; do
        for f in "$work/quic-$n/$side"/*.qlog; do
            [ -e "$f" ] || continue
            gzip -n -9 -c "$f" >"$q/$side-$(basename "$f").gz"
        done
    done
    if [ "$n" != mixed ]; then   # quic-mixed is the keyless sample
        if [ -s "$work/quic-$n/client.keys" ]; then k="$work/quic-$n/client.keys"; else k="$work/quic-$n/server.keys"; fi
        cp "$k" "$here/quic-$n.keys"; chmod 644 "$here/quic-$n.keys"
    fi
done
# The secrets-block copy is made of a small capture (quic-rebind, 14 KB), not of quic-h3 (1.3 MB).
if [ -s "$here/quic-rebind.keys" ] && [[ " ${names[*]} " == *" rebind "* ]]; then
    rm -f "$here/quic-rebind-dsb.pcapng"
    editcap --inject-secrets "tls,$here/quic-rebind.keys" "$here/quic-rebind.pcap" "$here/quic-rebind-dsb.pcapng"
fi

[ -n "${NO_DERIVE:-}" ] || $PY "$here/derive-quic-expected.py"
