#!/usr/bin/env bash
# Records the TLS sample captures samples/tls-*.pcap on loopback: nginx with a throw-away
# self-signed certificate as server, curl (and openssl s_client) as clients. Run as root.
# Then samples/derive-tls-expected.py writes samples/expected/tls-*/tls.tshark.csv from them.
#
# Every run makes a new key and new randoms, so the captures (and their expected files) change
# byte for byte but not in shape; commit the pcaps and expected files together.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work="$here/.work/tls"
host=tls.example.test

command -v nginx >/dev/null && command -v tcpdump >/dev/null && command -v curl >/dev/null \
    && command -v openssl >/dev/null && command -v tshark >/dev/null \
    || apt-get install -y nginx openssl curl tcpdump tshark

rm -rf "$work"
mkdir -p "$work/logs" "$work/html"
chmod 755 "$here/.work" "$work" "$work/html"

# P-256 ECDSA keeps the certificate (and so the captures) small.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=$host" -addext "subjectAltName=DNS:$host" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

printf 'hello over TLS\n' > "$work/html/index.html"
# 20,000 bytes: a full 16 KiB record and a partial one, several records per loopback segment.
python3 -c 'import sys; sys.stdout.write("0123456789abcdef" * 1250)' > "$work/html/big.txt"
chmod 644 "$work/html/"*

cat > "$work/nginx.conf" <<CONF
daemon on;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $work/tmp-body;
    proxy_temp_path $work/tmp-proxy;
    fastcgi_temp_path $work/tmp-fastcgi;
    uwsgi_temp_path $work/tmp-uwsgi;
    scgi_temp_path $work/tmp-scgi;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:TLS:1m;
    ssl_session_tickets on;
    root $work/html;
    # Default groups: X25519 first, as curl offers.
    server { listen 127.0.0.1:8443 ssl http2; server_name $host; }
    # X25519 only: a client whose only key share is P-256 gets a HelloRetryRequest (RFC 8446 §4.1.4).
    server { listen 127.0.0.1:8445 ssl http2; server_name $host; ssl_ecdh_curve X25519; }
}
CONF
nginx -p "$work" -c "$work/nginx.conf"
trap 'kill "$(cat "$work/nginx.pid")" 2>/dev/null || true' EXIT
sleep 1

curl_tls() { curl -sS -o /dev/null -k --resolve "$host:8443:127.0.0.1" --resolve "$host:8445:127.0.0.1" "$@"; }

# capture NAME COMMAND...: records loopback traffic to the test ports while COMMAND runs.
capture() {
    local name=$1
    shift
    local pcap="$here/$name.pcap"
    tcpdump -i lo -s 0 -U -Z root -w "$pcap" 'tcp port 8443 or tcp port 8445' 2>/dev/null &
    local dump=$!
    sleep 1
    "$@"
    sleep 1
    kill "$dump"
    wait "$dump" || true
    echo "$name.pcap: $(stat -c %s "$pcap") bytes"
}

capture tls-v12-http1 curl_tls --tlsv1.2 --tls-max 1.2 --http1.1 "https://$host:8443/"
capture tls-v12-h2 curl_tls --tlsv1.2 --tls-max 1.2 --http2 "https://$host:8443/"
capture tls-v13-h2 curl_tls --tlsv1.3 --http2 "https://$host:8443/"
capture tls-v13-http1-big curl_tls --tlsv1.3 --http1.1 "https://$host:8443/big.txt"
# Two URLs, "Connection: close": curl opens a second connection and resumes the first one's
# session (TLS 1.2: session ID/ticket; TLS 1.3: PSK from a NewSessionTicket).
capture tls-v12-resumed curl_tls --tlsv1.2 --tls-max 1.2 --http1.1 -H 'Connection: close' \
    "https://$host:8443/" -o /dev/null "https://$host:8443/index.html"
capture tls-v13-resumed curl_tls --tlsv1.3 --http1.1 -H 'Connection: close' \
    "https://$host:8443/" -o /dev/null "https://$host:8443/index.html"
# OpenSSL 3.0 sends a key share for the first group only (P-256); the server accepts X25519 only.
capture tls-v13-hrr curl_tls --tlsv1.3 --http1.1 --curves P-256:X25519 "https://$host:8445/"

python3 "$here/derive-tls-expected.py" "$here"/tls-*.pcap
