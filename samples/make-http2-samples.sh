#!/usr/bin/env bash
# Records the HTTP/2 sample captures samples/http2-*.pcap (issue 22) and derives their expected numbers
# (samples/derive-http2-expected.py). Run as root from anywhere: sudo samples/make-http2-samples.sh
#
# All traffic stays inside two network namespaces made here, trh2-cli (10.234.0.1) and trh2-srv
# (10.234.0.2), joined by the veth pair trh2-c/trh2-s: MTU 1500, TSO/GSO/GRO off, so bodies travel in
# 1448-byte segments as on a real link. tcpdump runs on the server end (trh2-s). Servers (in trh2-srv):
#   8080  nginx 1.22, `listen ... http2` without ssl: h2c with prior knowledge (nginx has no h2c upgrade)
#   8443  nginx 1.22, `ssl http2` (ALPN h2), TLS 1.2 and 1.3, self-signed P-256 certificate for h2.example.test
#   8081  samples/h2-upgrade-server.py (Python h2): accepts `Upgrade: h2c`
#   8082  samples/h2-features.py server (Python h2)
#   50051 samples/grpc-sample.py server (grpcio, insecure = h2c)
# Clients (in trh2-cli): nghttp and curl 7.88.1 (nghttp2 1.52), the Python h2 client of h2-features.py,
# the grpcio client of grpc-sample.py.
#
# Served content is fixed (bytes and mtime), nginx's Date changes (its HPACK Huffman length can change by
# a bit or so), TLS keys, ports and timestamps change: commit captures, key logs and expected files together.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
work="$here/.work/http2"
NS_C=trh2-cli
NS_S=trh2-srv
CLI_IP=10.234.0.1
SRV_IP=10.234.0.2
host=h2.example.test
PIDS=()

need=()
for tool in nginx tcpdump curl nghttp openssl tshark ethtool python3; do
    command -v $tool >/dev/null || need+=("$tool")
done
if [ ${#need[@]} -gt 0 ]; then
    apt-get update
    apt-get install -y nginx-light tcpdump curl nghttp2-client openssl tshark ethtool python3 python3-pip
fi
python3 -c 'import h2, hpack, grpc, grpc_tools' 2>/dev/null \
    || python3 -m pip install --break-system-packages h2 hpack grpcio grpcio-tools

cleanup() {
    local rc=$?
    set +e
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null
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
ip link add trh2-c netns $NS_C type veth peer name trh2-s netns $NS_S
for pair in "$NS_C trh2-c $CLI_IP" "$NS_S trh2-s $SRV_IP"; do
    set -- $pair
    ip -n "$1" link set lo up
    ip -n "$1" link set "$2" mtu 1500
    ip -n "$1" addr add "$3/24" dev "$2"
    ip -n "$1" link set "$2" up
    ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
done
sleep 1
cli() { ip netns exec $NS_C "$@"; }

# ------------------------------------------------------------------------------------ content
rm -rf "$work"
mkdir -p "$work/html" "$work/logs" "$work/tmp"
chmod 755 "$here/.work" "$work" "$work/html"
python3 - "$work" <<'PY'
import random, sys
w = sys.argv[1]
open(w + "/html/index.html", "w").write("<!doctype html>\n<title>traffic h2</title>\n<p>hello over HTTP/2</p>\n")
words = "stream frame header hpack window settings priority push trailer cookie body".split()
lines = ["%04d %s" % (i, " ".join(words[(i * 7 + j) % len(words)] for j in range(9))) for i in range(150)]
open(w + "/html/page.txt", "w").write("\n".join(lines) + "\n")            # 10 074 bytes of text: gzip
open(w + "/html/big.bin", "wb").write(random.Random(22).randbytes(204800))  # 200 KiB, incompressible
form = "&".join("field%02d=%s" % (i, ("value-%02d-" % i) * 8) for i in range(40))
open(w + "/form.txt", "w").write(form[:3000])                              # a 3 000-byte form body
PY
chmod 644 "$work/html/"*
touch -d '2024-01-01 00:00:00 UTC' "$work/html/"*
# nginx's ETag is "<mtime hex>-<size hex>"
etag=$(printf '"%x-%x"' "$(stat -c %Y "$work/html/index.html")" "$(stat -c %s "$work/html/index.html")")
cookie='session=4f3c2a1b0e9d8c7b6a5f; theme=dark; lang=en-GB; consent=analytics%3Dno; ab=variant-b; tz=Europe%2FBerlin; cart=3f9e'

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=$host" -addext "subjectAltName=DNS:$host" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

cat > "$work/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    keepalive_timeout 30;
    gzip on;
    gzip_types text/plain;
    gzip_min_length 256;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen $SRV_IP:8080 http2;
        listen $SRV_IP:8443 ssl http2;
        server_name $host;
        root $work/html;
        location = /account/ {
            add_header Set-Cookie "sid=4f2a9c0d17e3b5a8; Path=/; HttpOnly";
            add_header Set-Cookie "theme=dark; Max-Age=3600; Path=/";
            default_type text/plain;
            return 200 "account page\n";
        }
        location = /search {
            default_type text/plain;
            return 200 "results for \$arg_q\n";
        }
        # proxied, so that nginx reads the whole request body before it answers (a plain return here answers
        # at once, and when the body is still arriving nginx resets the stream, which curl 7.88 reports as
        # "Stream error in the HTTP/2 framing layer")
        location = /submit {
            proxy_pass http://127.0.0.1:8090;
        }
    }
    server {
        listen 127.0.0.1:8090;
        location / {
            default_type text/plain;
            return 201 "stored\n";
        }
    }
}
CONF
ip netns exec $NS_S nginx -c "$work/nginx.conf"

start_bg() { ip netns exec $NS_S "$@" & PIDS+=($!); }
start_bg python3 "$here/h2-upgrade-server.py" $SRV_IP 8081
start_bg python3 "$here/h2-features.py" server $SRV_IP 8082
python3 "$here/grpc-sample.py" gen "$work/grpc"
start_bg python3 "$here/grpc-sample.py" server "$work/grpc" $SRV_IP 50051
for port in 8080 8443 8081 8082 50051; do
    for i in $(seq 100); do
        cli bash -c "exec 3<>/dev/tcp/$SRV_IP/$port" 2>/dev/null && break
        sleep 0.1
    done
done
sleep 1  # the probe connections above are over before any capture starts

# capture NAME FILTER COMMAND...: tcpdump on the server's veth end while COMMAND runs.
capture() {
    local name=$1 filter=$2
    shift 2
    local pcap="$here/$name.pcap"
    rm -f "$pcap"
    ip netns exec $NS_S tcpdump -U -Z root -n -s 0 -i trh2-s -w "$pcap" "$filter" 2>"$work/logs/$name.tcpdump" &
    local dump=$!
    for i in $(seq 100); do grep -q "listening on" "$work/logs/$name.tcpdump" && break; sleep 0.05; done
    "$@"
    sleep 1
    kill -INT "$dump"
    wait "$dump" || true
    chmod 644 "$pcap"
    echo "$name.pcap: $(stat -c %s "$pcap") bytes"
}

# ------------------------------------------------------------------------------------ h2c, prior knowledge
# curl 7.88.1 cannot reuse an h2c prior-knowledge connection (curl issue 10634, fixed in 8.0: the second
# transfer fails with "Error in the HTTP2 framing layer"), so the multiplexed connection is nghttp's
# (nghttp2 1.52, the library curl uses): 7 GETs at once on one connection, every one with the same
# cookie field (7 crumbs in one field, as curl -b sends them), accept-encoding and if-none-match
# (matching /index.html only: 304). nghttp also sends its PRIORITY tree (idle streams 3-11) and
# WINDOW_UPDATEs while the 200 KiB download arrives. Then two curl connections with one transfer each:
# a 3 000-byte form POST with cookies, and a HEAD.
U=http://$SRV_IP:8080
h2c_prior() {
    cli nghttp -n -H "cookie: $cookie" -H 'accept-encoding: gzip, deflate' -H "if-none-match: $etag" \
        $U/index.html $U/page.txt $U/big.bin $U/missing.html $U/account/ "$U/search?q=caf%C3%A9+au+lait&page=2"
    cli curl -sS -o /dev/null --http2-prior-knowledge -b "$cookie" -H 'Content-Type: application/x-www-form-urlencoded' \
        --data-binary @"$work/form.txt" $U/submit
    cli curl -sS -o /dev/null --http2-prior-knowledge -I $U/index.html
}
capture http2-h2c-prior "tcp port 8080" h2c_prior

# ------------------------------------------------------------------------------------ TLS (ALPN h2)
# One curl, one connection (curl multiplexes with -Z over TLS): the 9 transfers start at once.
tls_run() {  # tls_run KEYS TLS-OPTIONS...
    local keys=$1
    shift
    rm -f "$keys"
    local u=https://$host:8443
    local o=(-sS -k --http2 --resolve "$host:8443:$SRV_IP" -o /dev/null "$@")
    SSLKEYLOGFILE="$keys" cli curl --no-progress-meter -Z "${o[@]}" $u/index.html \
        --next "${o[@]}" --compressed -b "$cookie" $u/page.txt \
        --next "${o[@]}" -b "$cookie" $u/account/ \
        --next "${o[@]}" -b "$cookie" -H 'Content-Type: application/x-www-form-urlencoded' --data-binary @"$work/form.txt" $u/submit \
        --next "${o[@]}" $u/big.bin \
        --next "${o[@]}" $u/missing.html \
        --next "${o[@]}" -I $u/index.html \
        --next "${o[@]}" -H "If-None-Match: $etag" $u/index.html \
        --next "${o[@]}" "$u/search?q=caf%C3%A9+au+lait&page=2"
    chmod 644 "$keys"
}
capture http2-tls "tcp port 8443" tls_run "$here/http2-tls.keys" --tlsv1.3
capture http2-tls12 "tcp port 8443" tls_run "$here/http2-tls12.keys" --tlsv1.2 --tls-max 1.2 \
    --ciphers ECDHE-ECDSA-AES128-GCM-SHA256

# ------------------------------------------------------------------------------------ h2c upgrade
# curl --http2 on http:// sends the first request as HTTP/1.1 with Upgrade: h2c and HTTP2-Settings; the
# server answers 101 and stream 1 in HTTP/2; the second URL goes on the same connection as stream 3.
# Both carry the cookie: a Cookie: line in HTTP/1.1, then a cookie field in HTTP/2.
upgrade() {
    local o=(-sS --http2 -o /dev/null -b "$cookie")
    cli curl "${o[@]}" http://$SRV_IP:8081/ --next "${o[@]}" http://$SRV_IP:8081/second.txt
}
capture http2-h2c-upgrade "tcp port 8081" upgrade

# ------------------------------------------------------------------------------------ frame features
capture http2-features "tcp port 8082" cli python3 "$here/h2-features.py" client $SRV_IP 8082

# ------------------------------------------------------------------------------------ gRPC
capture http2-grpc "tcp port 50051" cli python3 "$here/grpc-sample.py" client "$work/grpc" $SRV_IP 50051

python3 "$here/derive-http2-expected.py"

# Two segments of the 200 KiB download removed (frames 16 and 32 of the capture above): one inside a DATA frame,
# one across a DATA frame header. Its expected numbers follow from the whole capture's (HTTP2ReportTests).
editcap "$here/http2-h2c-prior.pcap" "$here/http2-h2c-prior-dropped.pcap" 16 32
