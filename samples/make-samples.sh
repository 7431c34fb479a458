#!/usr/bin/env bash
# Make the real packet captures under samples/ and derive their expected numbers.
#
# Run as root from the repository root:   samples/make-samples.sh
#
# All traffic stays inside network namespaces created here:
#   trsmp-lo   only its own loopback (127.0.0.1, ::1); used for the "loopback"
#              captures so nothing on the host's lo (ports, other users) interferes
#   trsmp-cli / trsmp-srv   joined by a veth pair (10.233.0.1 <-> 10.233.0.2, MTU 1500,
#              TSO/GSO/GRO off) so bodies split into ~1448-byte segments
# Everything is torn down by the EXIT trap, also on failure.  Re-running simply
# overwrites the captures (the traffic is the same; timestamps, ports, ISNs differ),
# and then samples/derive-expected.py must be (and is) re-run.
set -euo pipefail

cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }

S=samples
W=$S/.work          # scratch (ignored by git)
NS_LO=trsmp-lo
NS_C=trsmp-cli
NS_S=trsmp-srv
CLI_IP=10.233.0.1
SRV_IP=10.233.0.2
PIDS=()

cleanup() {
    local rc=$?
    set +e
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    for ns in $NS_LO $NS_C $NS_S; do ip netns del $ns 2>/dev/null; done
    exit $rc
}
trap cleanup EXIT INT TERM

# leftovers of an earlier, killed run
for ns in $NS_LO $NS_C $NS_S; do ip netns del $ns 2>/dev/null || true; done
rm -rf "$W"
mkdir -p "$W/docroot/account" "$W/tmp" "$S/expected"
WABS=$(cd "$W" && pwd)

# ---------------------------------------------------------------- content
python3 - "$W/docroot" <<'EOF'
import random, sys, os
d = sys.argv[1]
rnd = random.Random(20240101)
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
words = "packet capture segment window stream header body chunk cookie request response".split()
def prose(n):
    out = []
    while sum(map(len, out)) < n:
        out.append(" ".join(rnd.choice(words) for _ in range(12)) + ".\n")
    return "".join(out)[:n]
w("index.html", ("<!doctype html>\n<html><head><title>traffic sample</title></head>\n<body>\n<p>"
                 + prose(420) + "</p>\n</body></html>\n").encode())
w("account/index.html", b"<!doctype html>\n<html><body><p>account page</p></body></html>\n")
w("page.html", ("<!doctype html>\n<html><body>\n<pre>\n" + prose(8000) + "</pre>\n</body></html>\n").encode())
w("data-20k.bin", rnd.randbytes(20000))
w("big-150k.bin", rnd.randbytes(150000))
w("file-12k.txt", prose(12000).encode())
EOF
find "$W/docroot" -type f -exec touch -d '2024-01-01 00:00:00 UTC' {} +

nginx_conf() { # name listen-lines...
    local name=$1; shift
    local listens=""
    for l in "$@"; do listens+="        listen $l;"$'\n'; done
    mkdir -p "$WABS/tmp/$name"
    cat > "$WABS/nginx-$name.conf" <<EOF
user root;
worker_processes 1;
pid $WABS/nginx-$name.pid;
error_log $WABS/nginx-$name-error.log;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path $WABS/tmp/$name/body;
    proxy_temp_path $WABS/tmp/$name/proxy;
    fastcgi_temp_path $WABS/tmp/$name/fastcgi;
    uwsgi_temp_path $WABS/tmp/$name/uwsgi;
    scgi_temp_path $WABS/tmp/$name/scgi;
    keepalive_timeout 30;
    gzip on;                 # text/html is always a gzip type
    gzip_min_length 256;
    gzip_vary on;
    server {
$listens        root $WABS/docroot;
        location /account/ {
            add_header Set-Cookie "sid=4f2a9c0d17e3b5a8; Path=/; HttpOnly";
            add_header Set-Cookie "theme=dark; Max-Age=3600; Path=/";
        }
        location = /search {
            default_type text/plain;
            return 200 "results for \$arg_q\n";
        }
    }
}
EOF
}

start_bg() { # ns cmd...   (starts in background, remembers the pid in LAST_PID)
    local ns=$1; shift
    ip netns exec "$ns" "$@" &
    LAST_PID=$!
    PIDS+=("$LAST_PID")
}

wait_port() { # ns host port
    local i
    for i in $(seq 100); do
        if ip netns exec "$1" bash -c "exec 3<>/dev/tcp/$2/$3" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "server $2:$3 in $1 did not come up" >&2; return 1
}

CAPS=()
start_cap() { # ns outfile tcpdump-args...
    local ns=$1 out=$2; shift 2
    rm -f "$out"
    start_bg "$ns" tcpdump -U -Z root -n -s 0 -w "$out" "$@" 2> "$W/$(basename "$out").log"
    CAPS+=("$LAST_PID")
    local i
    for i in $(seq 100); do
        grep -q "listening on" "$W/$(basename "$out").log" && return 0
        sleep 0.05
    done
    echo "tcpdump for $out did not start" >&2; return 1
}

stop_caps() { # let the last packets (FIN/ACK) arrive, then flush and stop
    sleep 1
    local p
    for p in "${CAPS[@]}"; do kill -INT "$p"; done
    for p in "${CAPS[@]}"; do wait "$p" || true; done
    CAPS=()
}

# ---------------------------------------------------------------- namespaces
ip netns add $NS_LO
ip -n $NS_LO link set lo up

ip netns add $NS_C
ip netns add $NS_S
ip link add trsmp-c netns $NS_C type veth peer name trsmp-s netns $NS_S
for pair in "$NS_C trsmp-c $CLI_IP" "$NS_S trsmp-s $SRV_IP"; do
    set -- $pair
    ip -n "$1" link set lo up
    ip -n "$1" link set "$2" mtu 1500
    ip -n "$1" addr add "$3/24" dev "$2"
    ip -n "$1" link set "$2" up
    if command -v ethtool >/dev/null; then
        ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
    else
        echo "note: ethtool missing, offloads left on" >&2
    fi
done
sleep 1   # let the veth link settle (no IPv6 DAD noise in the captures: we filter on tcp)

# ---------------------------------------------------------------- servers
nginx_conf lo 127.0.0.1:80 "[::1]:80"
nginx_conf srv $SRV_IP:80
start_bg $NS_LO nginx -e "$WABS/nginx-lo-error.log" -c "$WABS/nginx-lo.conf" -g 'daemon off;'
start_bg $NS_S nginx -e "$WABS/nginx-srv-error.log" -c "$WABS/nginx-srv.conf" -g 'daemon off;'
start_bg $NS_LO python3 $S/encoding-server.py 127.0.0.1 8000
start_bg $NS_S python3 $S/encoding-server.py $SRV_IP 8000
wait_port $NS_LO 127.0.0.1 80
wait_port $NS_LO ::1 80
wait_port $NS_LO 127.0.0.1 8000
wait_port $NS_S $SRV_IP 80
wait_port $NS_S $SRV_IP 8000

CURL=(curl -sS --http1.1 --no-progress-meter)
U=http://127.0.0.1

# ---------------------------------------------------------------- http-basic (+ real cooked/nsec captures)
# One curl process, one keep-alive connection (--next keeps the connection cache).
start_cap $NS_LO $S/http-basic.pcap -i lo tcp port 80
start_cap $NS_LO $S/http-basic-sll.pcap -i any -y LINUX_SLL tcp port 80
start_cap $NS_LO $S/http-basic-sll2.pcap -i any -y LINUX_SLL2 tcp port 80
start_cap $NS_LO $S/http-basic-nsec.pcap -i lo --time-stamp-precision=nano tcp port 80
ip netns exec $NS_LO "${CURL[@]}" -o /dev/null $U/index.html \
    --next -o /dev/null $U/data-20k.bin \
    --next -o /dev/null -I $U/index.html \
    --next -o /dev/null -H 'If-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT' $U/index.html \
    --next -o /dev/null $U/missing.html \
    --next -o /dev/null -b 'session=9f8e7d6c5b4a; lang=en-GB' $U/account/ \
    --next -o /dev/null --compressed $U/page.html \
    --next -o /dev/null "$U/search?q=caf%C3%A9+au+lait&page=2"
stop_caps

# ---------------------------------------------------------------- http-pipelined
start_cap $NS_LO $S/http-pipelined.pcap -i lo tcp port 80
ip netns exec $NS_LO python3 $S/pipeline-client.py 127.0.0.1 80
stop_caps

# ---------------------------------------------------------------- http-encodings
E=http://127.0.0.1:8000
start_cap $NS_LO $S/http-encodings.pcap -i lo tcp port 8000
ip netns exec $NS_LO "${CURL[@]}" -o /dev/null -H 'Accept-Encoding: gzip' $E/gzip \
    --next -o /dev/null -H 'Accept-Encoding: deflate' $E/deflate-zlib \
    --next -o /dev/null -H 'Accept-Encoding: deflate' $E/deflate-raw \
    --next -o /dev/null -H 'Accept-Encoding: br' $E/br \
    --next -o /dev/null -H 'Accept-Encoding: zstd' $E/zstd \
    --next -o /dev/null -H 'Accept-Encoding: gzip, br' $E/gzip-br \
    --next -o /dev/null $E/chunked \
    --next -o /dev/null -H 'Accept-Encoding: gzip' $E/chunked-gzip \
    --next -o /dev/null $E/no-content
ip netns exec $NS_LO curl -sS --http1.0 -o /dev/null $E/http10
stop_caps

# ---------------------------------------------------------------- http-ipv6
start_cap $NS_LO $S/http-ipv6.pcap -i lo tcp port 80
ip netns exec $NS_LO "${CURL[@]}" -g -o /dev/null 'http://[::1]/index.html' \
    --next -o /dev/null 'http://[::1]/search?q=v6'
stop_caps

# ---------------------------------------------------------------- veth captures (MTU 1500)
# tcpdump runs in the server namespace on its veth end.
start_cap $NS_S $S/http-netns.pcap -i trsmp-s tcp
ip netns exec $NS_C "${CURL[@]}" -o /dev/null http://$SRV_IP/big-150k.bin
python3 -c 'import random; import sys; sys.stdout.buffer.write(random.Random(7).randbytes(100000))' > "$W/upload.bin"
ip netns exec $NS_C "${CURL[@]}" -o /dev/null -H 'Expect: 100-continue' \
    -H 'Content-Type: application/octet-stream' --data-binary @"$W/upload.bin" http://$SRV_IP:8000/upload
stop_caps

# small multi-segment capture the gap/reorder/duplicate/truncate variants are derived from
start_cap $NS_S $S/http-segments.pcap -i trsmp-s tcp
ip netns exec $NS_C "${CURL[@]}" -o /dev/null http://$SRV_IP/file-12k.txt \
    --next -o /dev/null http://$SRV_IP/index.html
stop_caps

# ---------------------------------------------------------------- derived files
python3 $S/derive-variants.py
editcap -F pcapng $S/http-basic.pcap $S/http-basic.pcapng
gzip -n -9 -c $S/http-basic.pcap > $S/http-basic.pcap.gz

python3 $S/derive-expected.py
ls -l $S/*.pcap* >&2
