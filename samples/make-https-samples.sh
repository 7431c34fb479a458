#!/usr/bin/env bash
# Records the HTTPS sample captures samples/https-*.pcap (and https-dsb*.pcapng) with the key log
# each client wrote (samples/https-NAME.keys, NSS key log format, RFC 9850), one capture per TLS
# feature, all carrying HTTP/1.1. Run as root from anywhere: sudo samples/make-https-samples.sh
#
# Servers: nginx 1.22 (OpenSSL 3.0) with a throw-away self-signed P-256 ECDSA certificate for
# https.example.test, on ports 8443-8448 of the loopback of a private network namespace (trhttps).
# Clients: curl 7.88 (SSLKEYLOGFILE) and openssl s_client (-keylogfile). tcpdump on that loopback.
# Then samples/derive-https-expected.py writes samples/expected/https-*/ from the captures.
#
# Every run makes new keys, randoms, ports and timestamps, so captures, key logs and expected files
# change byte for byte (not in shape): commit them together.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work="$here/.work/https"
host=https.example.test
NS=trhttps
cookie='session=4f3c2a1b0e9d8c7b6a5f4e3d2c1b0a99; theme=dark'
form='name=traffic&lang=swift&comment=sizes+every+HTTP+message+exactly%2C+also+inside+TLS'

need=()
for tool in nginx tcpdump curl openssl tshark editcap ethtool python3; do
    command -v $tool >/dev/null || need+=("$tool")
done
if [ ${#need[@]} -gt 0 ]; then
    apt-get update
    apt-get install -y nginx-light tcpdump curl openssl tshark ethtool python3
fi

cleanup() {
    [ -f "$work/nginx.pid" ] && ip netns exec $NS kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    ip netns del $NS 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns del $NS 2>/dev/null || true
ip netns add $NS
ip netns exec $NS ip link set lo up
in_ns() { ip netns exec $NS "$@"; }

rm -rf "$work"
mkdir -p "$work/logs" "$work/html"
chmod 755 "$here/.work" "$work" "$work/html"

# P-256 ECDSA keeps the certificate (and so the captures) small; the TLS 1.2 suites are ECDHE-ECDSA-*.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=$host" -addext "subjectAltName=DNS:$host" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

# Content: fixed bytes and mtime, so sizes, ETags and Last-Modified are the same on every run.
printf '<!doctype html>\n<title>traffic</title>\n<p>hello over HTTPS</p>\n' > "$work/html/index.html"
python3 - "$work/html" <<'PY'
import sys
words = "request response header cookie body chunk record cipher secret handshake ticket".split()
lines = ["%04d %s" % (i, " ".join(words[(i * 7 + j) % len(words)] for j in range(9))) for i in range(120)]
open(sys.argv[1] + "/page.txt", "w").write("\n".join(lines) + "\n")        # text, gzip-compressed by nginx
open(sys.argv[1] + "/big.txt", "w").write("0123456789abcdef" * 1250)        # 20,000 bytes
PY
chmod 644 "$work/html/"*
touch -d '2024-01-01 00:00:00 UTC' "$work/html/"*

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
    default_type text/plain;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers off;
    ssl_session_cache shared:HTTPS:1m;
    ssl_session_tickets on;
    root $work/html;
    gzip on;
    gzip_types text/plain;
    gzip_min_length 100;

    # Defaults: TLS 1.2 and 1.3, every OpenSSL cipher, encrypt_then_mac and extended master secret
    # offered back, session tickets (TLS 1.2 and 1.3 PSK resumption).
    server { listen 127.0.0.1:8443 ssl; server_name $host;
             location = /page.txt { add_header Set-Cookie "seen=1; Path=/; Secure; HttpOnly"; }
             location = /submit { return 201 "stored\n"; } }
    # No encrypt_then_mac in the ServerHello: CBC suites use MAC-then-encrypt (RFC 5246 6.2.3.2).
    server { listen 127.0.0.1:8444 ssl; server_name $host; ssl_conf_command Options -EncryptThenMac;
             location = /page.txt { add_header Set-Cookie "seen=1; Path=/; Secure; HttpOnly"; }
             location = /submit { return 201 "stored\n"; } }
    # X25519 only: a client whose only key share is P-256 gets a HelloRetryRequest.
    server { listen 127.0.0.1:8445 ssl; server_name $host; ssl_ecdh_curve X25519;
             location = /page.txt { add_header Set-Cookie "seen=1; Path=/; Secure; HttpOnly"; }
             location = /submit { return 201 "stored\n"; } }
    # No extended_master_secret in the ServerHello: the RFC 5246 master secret (client+server random).
    server { listen 127.0.0.1:8446 ssl; server_name $host; ssl_conf_command Options -ExtendedMasterSecret;
             location = /page.txt { add_header Set-Cookie "seen=1; Path=/; Secure; HttpOnly"; }
             location = /submit { return 201 "stored\n"; } }
    # No session tickets: TLS 1.2 resumes by session ID from the server's session cache.
    server { listen 127.0.0.1:8447 ssl; server_name $host; ssl_session_tickets off;
             location = /page.txt { add_header Set-Cookie "seen=1; Path=/; Secure; HttpOnly"; }
             location = /submit { return 201 "stored\n"; } }
    # TLS 1.3 0-RTT: tickets allow early data and nginx reads it.
    server { listen 127.0.0.1:8448 ssl; server_name $host; ssl_early_data on;
             location = /page.txt { add_header Set-Cookie "seen=1; Path=/; Secure; HttpOnly"; }
             location = /submit { return 201 "stored\n"; } }
}
CONF
in_ns nginx -p "$work" -c "$work/nginx.conf"
sleep 1

# capture NAME COMMAND...: records the namespace's loopback (TCP 8443-8448) while COMMAND runs.
# COMMAND writes its key log to $KEYS, which becomes samples/NAME.keys.
capture() {
    local name=$1
    shift
    local pcap="$here/$name.pcap"
    export KEYS="$here/$name.keys"
    rm -f "$KEYS" "$pcap"
    ip netns exec $NS tcpdump -i lo -s 0 -U -Z root -w "$pcap" 'tcp portrange 8443-8448' 2>/dev/null &
    local dump=$!
    sleep 1
    "$@"
    sleep 1
    kill -INT "$dump"
    wait "$dump" || true
    chmod 644 "$pcap" "$KEYS"
    echo "$name.pcap: $(stat -c %s "$pcap") bytes, $name.keys: $(wc -l < "$KEYS") lines"
}

# curl with its key log; every URL group repeats the connection options so that curl reuses the
# connection (--next resets options).
c() { SSLKEYLOGFILE="$KEYS" in_ns curl -sS -k --http1.1 --resolve "$host:$port:127.0.0.1" "$@"; }

# workload PORT TLS-OPTIONS...: one keep-alive connection: GET a small file, GET a text file with a
# Cookie and Accept-Encoding: gzip (nginx answers gzip, chunked, with Set-Cookie), POST a form.
workload() {
    port=$1
    shift
    local u="https://$host:$port"
    c "$@" -o /dev/null "$u/index.html" \
        --next "$@" -sS -k --http1.1 --resolve "$host:$port:127.0.0.1" -o /dev/null --compressed -b "$cookie" "$u/page.txt" \
        --next "$@" -sS -k --http1.1 --resolve "$host:$port:127.0.0.1" -o /dev/null --data-binary "$form" "$u/submit"
}

# resumed PORT TLS-OPTIONS...: two connections in one curl run: GET, then GET with Connection: close;
# the second connection (POST) resumes the first one's session.
resumed() {
    port=$1
    shift
    local u="https://$host:$port"
    c "$@" -o /dev/null "$u/index.html" \
        --next "$@" -sS -k --http1.1 --resolve "$host:$port:127.0.0.1" -o /dev/null --compressed -H 'Connection: close' "$u/page.txt" \
        --next "$@" -sS -k --http1.1 --resolve "$host:$port:127.0.0.1" -o /dev/null -b "$cookie" --data-binary "$form" "$u/submit"
}

v12() { workload 8443 --tlsv1.2 --tls-max 1.2 --ciphers "$1"; }

# ---------------------------------------------------------------------------------------- TLS 1.2
capture https-v12-aes128gcm v12 ECDHE-ECDSA-AES128-GCM-SHA256
capture https-v12-aes256gcm v12 ECDHE-ECDSA-AES256-GCM-SHA384
capture https-v12-chacha20 v12 ECDHE-ECDSA-CHACHA20-POLY1305
capture https-v12-cbc-sha1-etm v12 ECDHE-ECDSA-AES128-SHA
capture https-v12-cbc-sha1-noetm workload 8444 --tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-SHA
capture https-v12-cbc-sha256 v12 ECDHE-ECDSA-AES128-SHA256
capture https-v12-cbc-sha384 v12 ECDHE-ECDSA-AES256-SHA384
capture https-v12-no-ems workload 8446 --tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-GCM-SHA256
capture https-v12-resumed-id resumed 8447 --tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-GCM-SHA256

# ---------------------------------------------------------------------------------------- TLS 1.3
capture https-v13-aes128gcm workload 8443 --tlsv1.3 --tls13-ciphers TLS_AES_128_GCM_SHA256
capture https-v13-aes256gcm workload 8443 --tlsv1.3 --tls13-ciphers TLS_AES_256_GCM_SHA384
capture https-v13-chacha20 workload 8443 --tlsv1.3 --tls13-ciphers TLS_CHACHA20_POLY1305_SHA256
# OpenSSL 3.0 sends a key share for its first group only (P-256); port 8445 wants X25519.
capture https-v13-hrr workload 8445 --tlsv1.3 --curves P-256:X25519
capture https-v13-psk resumed 8443 --tlsv1.3

req() {  # req PATH [EXTRA-HEADER-LINES]: an HTTP/1.1 GET as s_client sends it
    printf 'GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: openssl-s_client\r\nAccept: */*\r\n%b\r\n' "$1" "$host:$port" "${2:-}"
}
sclient() { in_ns openssl s_client -connect "127.0.0.1:$port" -servername "$host" -alpn http/1.1 -keylogfile "$KEYS" "$@"; }

post() {  # post [EXTRA-HEADER-LINES]: the form POST as s_client sends it
    printf 'POST /submit HTTP/1.1\r\nHost: %s\r\nUser-Agent: openssl-s_client\r\nAccept: */*\r\nCookie: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n%b\r\n%s' \
        "$host:$port" "$cookie" ${#form} "${1:-}" "$form"
}

# TLS 1.2 resumption by session ticket. curl 7.88 turns tickets off for OpenSSL (SSL_OP_NO_TICKET),
# so s_client makes both connections: the first stores the session with its ticket, the second
# presents the ticket (and a fresh session ID that the server echoes).
ticket12() {
    port=8443
    local tls=(-tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256)
    { sleep 1; req /index.html; sleep 1; req /page.txt 'Accept-Encoding: gzip\r\nConnection: close\r\n'; sleep 2; } \
        | sclient "${tls[@]}" -sess_out "$work/ticket12.sess" -ign_eof >/dev/null 2>&1
    { sleep 1; post 'Connection: close\r\n'; sleep 2; } \
        | sclient "${tls[@]}" -sess_in "$work/ticket12.sess" -ign_eof >"$work/logs/ticket12.out" 2>&1
    grep -q '^Reused, TLSv1.2' "$work/logs/ticket12.out" || { echo "the TLS 1.2 session was not resumed" >&2; exit 1; }
}
capture https-v12-resumed-ticket ticket12

# KeyUpdate: s_client sends a KeyUpdate (update_requested, so nginx answers with its own) when a
# line read from stdin is "K". One request before, two after, on one connection. The sleeps keep
# s_client from reading two requests at once (which would pipeline them).
keyupdate() {
    port=8443
    { sleep 1; req /index.html; sleep 1; printf 'K\n'; sleep 1
      req /page.txt 'Accept-Encoding: gzip\r\nCookie: '"$cookie"'\r\n'; sleep 1
      req /index.html 'Connection: close\r\n'; sleep 2; } \
        | sclient -tls1_3 >/dev/null 2>"$work/logs/keyupdate.err"
    grep -q KEYUPDATE "$work/logs/keyupdate.err" || { echo "s_client did not send a KeyUpdate" >&2; exit 1; }
}
capture https-v13-keyupdate keyupdate

# 0-RTT: a first connection stores the session (ticket with max_early_data), the second sends an
# HTTP request as early data; nginx (ssl_early_data on) accepts it and answers after the handshake.
early() {
    port=8448
    { sleep 1; req /index.html 'Connection: close\r\n'; sleep 2; } \
        | sclient -tls1_3 -sess_out "$work/early.sess" -ign_eof >/dev/null 2>&1
    req /page.txt 'Accept-Encoding: gzip\r\nConnection: close\r\n' > "$work/early.txt"
    sleep 2 | sclient -tls1_3 -sess_in "$work/early.sess" -early_data "$work/early.txt" -ign_eof \
        >"$work/logs/early.out" 2>&1
    grep -q 'Early data was accepted' "$work/logs/early.out" || { echo "0-RTT data was not accepted" >&2; exit 1; }
}
capture https-v13-early-data early

# -------------------------------------------------------------------------- DSB (secrets inside pcapng)
# Two connections, TLS 1.2 (CLIENT_RANDOM) then TLS 1.3; the key log goes into a Decryption Secrets
# Block before the first packet (editcap), and in https-dsb-late after the first connection's packets.
dsb() {
    workload 8443 --tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-GCM-SHA256
    workload 8443 --tlsv1.3
}
(here="$work" capture https-dsb dsb)
editcap --inject-secrets "tls,$work/https-dsb.keys" "$work/https-dsb.pcap" "$here/https-dsb.pcapng"
python3 - "$here/https-dsb.pcapng" "$here/https-dsb-late.pcapng" <<'PY'
# Moves the Decryption Secrets Block (type 0x0000000A) after the packets of the first TCP connection
# (its last packet block: the one before the second connection's SYN, found by the SYN flag).
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\x0a\x0d\x0d\x0a" and data[8:12] == b"\x4d\x3c\x2b\x1a", "little-endian pcapng expected"
blocks, pos = [], 0
while pos < len(data):
    btype, blen = struct.unpack_from("<II", data, pos)
    blocks.append((btype, data[pos:pos + blen]))
    pos += blen
dsb = [i for i, (t, _) in enumerate(blocks) if t == 0x0A]
assert len(dsb) == 1 and struct.unpack_from("<I", blocks[dsb[0]][1], 8)[0] == 0x544C534B
secrets = blocks.pop(dsb[0])
syns = []
for i, (t, b) in enumerate(blocks):
    if t == 6:  # EPB: Ethernet + IPv4 + TCP on loopback
        pkt = b[28:]
        ihl = (pkt[14] & 15) * 4
        flags = pkt[14 + ihl + 13]
        if flags & 0x12 == 0x02:
            syns.append(i)
assert len(syns) == 2, syns
blocks.insert(syns[1], secrets)
open(sys.argv[2], "wb").write(b"".join(b for _, b in blocks))
print("https-dsb-late.pcapng: DSB moved before block %d (after %d packet blocks)"
      % (syns[1], sum(1 for t, _ in blocks[:syns[1]] if t == 6)))
PY
chmod 644 "$here"/https-dsb*.pcapng

# --------------------------------------------------------------------- cut in the middle of a record
# MTU 1500 without segmentation offloads, so a 20,000-byte response is many 1448-byte segments; the
# copy keeps the frames before the response's last data segment: its last record is cut.
in_ns ip link set lo mtu 1500
in_ns ethtool -K lo tso off gso off gro off >/dev/null 2>&1 || true
bigcut() {
    port=8443
    local u="https://$host:$port"
    c --tlsv1.3 -o /dev/null "$u/index.html" --next --tlsv1.3 -sS -k --http1.1 --resolve "$host:$port:127.0.0.1" \
        -o /dev/null "$u/big.txt"
}
(here="$work" capture https-v13-cut bigcut)
cp "$work/https-v13-cut.keys" "$here/https-v13-cut.keys"
# The server's last segments are: ..., the response's last data segment, [close_notify + FIN after
# the client's]. Keep everything before the response's last data segment.
last=$(python3 - "$work/https-v13-cut.pcap" <<'PY'
import subprocess, sys
out = subprocess.run(["tshark", "-r", sys.argv[1], "-T", "fields", "-e", "frame.number", "-e", "tcp.srcport",
                      "-e", "tcp.len", "-e", "tls.record.content_type", "-e", "tls.record.opaque_type"],
                     capture_output=True, text=True).stdout.splitlines()
data = [l.split("\t") for l in out]
srv = [int(f[0]) for f in data if f[1] == "8443" and int(f[2] or 0) > 0]
cli = [int(f[0]) for f in data if f[1] != "8443" and int(f[2] or 0) > 0]
# the client's last data segment is its close_notify alert; the big response ends before it
last_req = cli[-2]
resp = [n for n in srv if last_req < n < cli[-1]]
assert len(resp) > 4, resp
print(resp[-1] - 1)
PY
)
editcap -r "$work/https-v13-cut.pcap" "$here/https-v13-cut.pcap" "1-$last"
chmod 644 "$here/https-v13-cut.pcap"
echo "https-v13-cut.pcap: frames 1-$last of $(capinfos -c -M "$work/https-v13-cut.pcap" | awk '/Number of packets/ {print $NF}')"

# ------------------------------------------------------------------------------- negative key logs
python3 - "$here" <<'PY'
import shutil, sys
d = sys.argv[1] + "/"
def flip(hexstr, i):
    c = hexstr[i]
    return hexstr[:i] + ("0" if c != "0" else "1") + hexstr[i + 1:]
def wrong(name, label):
    lines = open(d + name + ".keys").read().splitlines(True)
    out, done = [], False
    for l in lines:
        f = l.split()
        if not done and len(f) == 3 and f[0] == label:
            l = "%s %s %s\n" % (f[0], f[1], flip(f[2], 10))
            done = True
        out.append(l)
    assert done, (name, label)
    open(d + name + ".wrong.keys", "w").write("".join(out))
# TLS 1.2: one hex digit of the master secret; TLS 1.3: one of the server's application traffic secret
wrong("https-v12-aes128gcm", "CLIENT_RANDOM")
wrong("https-v13-aes128gcm", "SERVER_TRAFFIC_SECRET_0")
# Truncated: the first half of the lines (the first connection's), then half of the next line.
lines = open(d + "https-v13-psk.keys").read().splitlines(True)
half = len(lines) // 2
open(d + "https-v13-psk.truncated.keys", "w").write("".join(lines[:half]) + lines[half][:len(lines[half]) // 2])
# Secrets for other connections: another capture's key log.
shutil.copyfile(d + "https-v12-aes256gcm.keys", d + "https-v12-aes128gcm.other.keys")
PY
chmod 644 "$here"/https-*.keys

python3 "$here/derive-https-expected.py" "$here"/https-*.pcap "$here"/https-*.pcapng
