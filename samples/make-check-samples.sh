#!/usr/bin/env bash
# Record the captures for `traffic baseline|check|diff`: the same small JSON API session twice.
#
# Run as root from the repository root:   samples/make-check-samples.sh
#
#   samples/check-base.pcap     the recorded "known good" run
#   samples/check-larger.pcap   the same session, except that
#                                 - GET /api/items returns 3000 body bytes instead of 2000 (+50%)
#                                 - GET /api/recommendations is new
#                                 - /api/status is polled 5 times instead of 3 (per-request costs
#                                   stay equal, totals do not: that is why `check` defaults to per-request)
#
# Server and client run inside a network namespace of their own (only its loopback), so nothing
# leaves the machine and nothing else on the host's lo ends up in the capture. The server is
# python's http.server with fixed bodies and a fixed Server header, so a re-recording has the same
# byte counts (timestamps, ports and sequence numbers differ). Afterwards samples/derive-expected.py
# derives the golden numbers for both captures with tshark, like for every other sample.
set -euo pipefail

cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }

S=samples
W=$S/.work-check    # scratch (ignored by git: see cleanup)
NS=trchk-lo
PORT=8080
PIDS=()

cleanup() {
    local rc=$?
    set +e
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    ip netns del $NS 2>/dev/null
    rm -rf "$W"
    exit $rc
}
trap cleanup EXIT INT TERM

ip netns del $NS 2>/dev/null || true
rm -rf "$W"
mkdir -p "$W"
ip netns add $NS
ip -n $NS link set lo up

cat > "$W/api-server.py" <<'EOF'
"""A tiny JSON API with deterministic bodies; argv: host port variant (base|larger)."""
import http.server, json, sys

HOST, PORT, VARIANT = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def body(name, size):
    # Filler of an exact length so the byte counts are easy to check by hand.
    head = json.dumps({"endpoint": name, "data": ""})[:-2]
    return (head + "x" * (size - len(head) - 2) + "\"}").encode()

ROUTES = {
    "/api/config": body("config", 300),
    "/api/items": body("items", 3000 if VARIANT == "larger" else 2000),
    "/api/users/42": body("user", 500),
    "/api/users/97": body("user", 500),
    "/api/status": body("status", 120),
}
if VARIANT == "larger":
    ROUTES["/api/recommendations"] = body("recommendations", 800)

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def version_string(self):
        return "check-sample/1"

    def date_time_string(self, timestamp=None):
        return "Mon, 01 Jan 2024 00:00:00 GMT"

    def reply(self, status, data):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        data = ROUTES.get(self.path)
        self.reply(200 if data else 404, data or body("missing", 40))

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.reply(201, body("events", 60))

    def log_message(self, *args):
        pass

http.server.HTTPServer((HOST, PORT), Handler).serve_forever()
EOF

record() { # variant outfile
    local variant=$1 out=$2
    ip netns exec $NS python3 "$W/api-server.py" 127.0.0.1 $PORT "$variant" &
    local server=$!
    PIDS+=("$server")
    local i
    for i in $(seq 100); do
        ip netns exec $NS bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null && break
        sleep 0.1
    done
    rm -f "$out"
    ip netns exec $NS tcpdump -U -Z root -n -s 0 -i lo -w "$out" tcp port $PORT 2> "$W/tcpdump.log" &
    local cap=$!
    PIDS+=("$cap")
    for i in $(seq 100); do grep -q "listening on" "$W/tcpdump.log" && break; sleep 0.05; done

    local U=http://127.0.0.1:$PORT
    local polls=3
    [ "$variant" = larger ] && polls=5
    # One curl process, one keep-alive connection (--next keeps the connection cache).
    local args=(-o /dev/null $U/api/config
        --next -o /dev/null -b 'session=5d41402abc4b2a76b9719d911017c592' $U/api/items
        --next -o /dev/null -b 'session=5d41402abc4b2a76b9719d911017c592' $U/api/users/42
        --next -o /dev/null -b 'session=5d41402abc4b2a76b9719d911017c592' $U/api/users/97)
    for i in $(seq $polls); do args+=(--next -o /dev/null $U/api/status); done
    [ "$variant" = larger ] && args+=(--next -o /dev/null $U/api/recommendations)
    args+=(--next -o /dev/null -H 'Content-Type: application/json'
        --data '{"events":[{"name":"page_view","page":"/items"},{"name":"click","target":"item-7"}]}'
        $U/api/events)
    ip netns exec $NS curl -sS --http1.1 --no-progress-meter "${args[@]}"

    sleep 1   # let the FIN/ACKs arrive before stopping the capture
    kill -INT "$cap"; wait "$cap" || true
    kill "$server"; wait "$server" 2>/dev/null || true
}

record base $S/check-base.pcap
record larger $S/check-larger.pcap
ls -l $S/check-base.pcap $S/check-larger.pcap
python3 $S/derive-expected.py check-base check-larger
