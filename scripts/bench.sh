#!/usr/bin/env bash
# Whole-process benchmarks of `traffic` on a generated capture (run by `make bench`).
#
# Builds the release binary and the benchmark tools, generates the capture once (cached under
# .build/bench/), then measures wall time and peak RSS (GNU time's %e and %M) of:
#   a  the bare libpcap read loop (the floor)
#   b  traffic analyze FILE                      (stand-in: traffic connections FILE, until analyze exists)
#   b1 the same with --jobs 1 (single-threaded); b2 with --jobs 2 (when the binary has --jobs)
#   n1, n2 with --normalize-paths, --jobs 1 and 2: ids in paths collapse, so groups stay few
#   c  traffic analyze --overhead all FILE       (n/a when the option does not exist)
#   d  traffic analyze --messages --format csv FILE
#   e  tshark -q -z http,tree -r FILE            (when tshark is installed and BENCH_TSHARK is not 0)
#   h  traffic analyze --keylog KEYS HTTPS-FILE  (the same exchanges in TLS: traffic-bench-gen --tls);
#      h1, h2 with --jobs 1 and 2; the ratio to (b), peak RSS, and --jobs 1 vs 2 output compared
#   a2 the libpcap floor on the HTTP/2 capture (traffic-bench-gen --h2: the same exchanges as h2c)
#   h2c traffic analyze H2-FILE; h2c1, h2c2 with --jobs 1 and 2; goals: >= 1 GB/s, peak RSS <= 64 MiB
#   a3 the libpcap floor on the QUIC capture (traffic-bench-gen --quic: the same exchanges as HTTP/3 over QUIC)
#   q  traffic analyze QUIC-FILE without keys (quic records only); q1 with --jobs 1; goal >= 1 GB/s
#   qk traffic analyze --keylog KEYS QUIC-FILE (HTTP/3 records); qk1 with --jobs 1; goal >= 0.60 of (b)'s
#      speed in the same run (VARIANT=quic measures (b) on the cleartext capture too, for that ratio)
#   aa the libpcap floor on the API-dense capture (traffic-bench-gen --api: many short keep-alive connections of
#      small JSON calls); ab traffic analyze API-FILE, ab1 with --jobs 1; goals: ab >= 0.80 and ab1 >= 0.50 of the
#      floor's speed, b >= 0.95 (measured in the same run), peak RSS <= 64 MiB on both captures; abr (traffic
#      --jobs 1 --filter udp: traffic's own reading, every packet dropped by libpcap's filter) and abn1 (--jobs 1
#      --normalize-paths) split ab1's time into reading, per-packet and per-message work, and the groups; abh and
#      abh1 (default and --jobs 1 with --group-by host: 6 groups) give what the ~96 000 host/path groups cost
#   g, gtls, gh2, gquic, gapi: the generator, each time it writes a capture (cached captures are not regenerated)
#
# Every variant checks the analyzer's numbers against the generator's manifest and the script exits 1 when
# one differs (after printing everything). The HTTP/2 check compares the groups (records, header bytes as
# sent and decoded, DATA frame bytes, decoded bodies) and the summary (records, h2_control_bytes, no
# anomalies) with the generator's expected totals: it fails until the analyzer reports HTTP/2 records.
#
# Environment:
#   BENCH_SIZE=1GiB       capture size (e.g. 100MiB for a quick run)
#   BENCH_TSHARK=0        skip tshark
#   BENCH_SCALING=1       also compare peak RSS of (b) on 100MiB and 1GiB captures
#   BENCH_SEED=1          generator seed
#   BENCH_SCRATCH=DIR     SwiftPM scratch path for the benchmark tools (default .build-bench)
#   BENCH_REGENERATE=1    regenerate the capture even if it is cached
#   BENCH_RUNS=3          runs per measurement: the shortest wall time and the largest peak RSS are kept
#   BENCH_VERIFY=0        skip checking `traffic analyze --normalize-paths` against the MANIFEST.json
#   BENCH_TLS=0           skip the HTTPS runs (h, h1, h2)
#   BENCH_VARIANT=default which captures: default (cleartext HTTP/1.1, HTTPS, HTTP/2 and API-dense), h2 (HTTP/2 only:
#                         a2, h2c*), http (cleartext only), https (HTTPS only), quic (QUIC/HTTP/3: a3, q*, and (b)
#                         for the ratio), api (API-dense only: aa, ab*), all (the five); `make bench VARIANT=h2`
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${BENCH_SIZE:-1GiB}
SEED=${BENCH_SEED:-1}
SCRATCH=${BENCH_SCRATCH:-$ROOT/.build-bench}
CAPTURES=$ROOT/.build/bench
SWIFT=${SWIFT:-swift}
VARIANT=${BENCH_VARIANT:-default}
case $VARIANT in
default) RUN_HTTP=1 RUN_TLS=1 RUN_H2=1 RUN_QUIC=0 RUN_API=1 ;;
http) RUN_HTTP=1 RUN_TLS=0 RUN_H2=0 RUN_QUIC=0 RUN_API=0 ;;
https) RUN_HTTP=0 RUN_TLS=1 RUN_H2=0 RUN_QUIC=0 RUN_API=0 ;;
h2) RUN_HTTP=0 RUN_TLS=0 RUN_H2=1 RUN_QUIC=0 RUN_API=0 ;;
quic) RUN_HTTP=0 RUN_TLS=0 RUN_H2=0 RUN_QUIC=1 RUN_API=0 ;;
api) RUN_HTTP=0 RUN_TLS=0 RUN_H2=0 RUN_QUIC=0 RUN_API=1 ;;
all) RUN_HTTP=1 RUN_TLS=1 RUN_H2=1 RUN_QUIC=1 RUN_API=1 ;;
*)
    echo "bench.sh: BENCH_VARIANT (VARIANT) is default, h2, http, https, quic, api or all, not '$VARIANT'" >&2
    exit 2
    ;;
esac
[ "${BENCH_TLS:-1}" = 0 ] && RUN_TLS=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

log() { printf '%s\n' "$*" >&2; }

# GNU time: /usr/bin/time, not the shell keyword.
if [ ! -x /usr/bin/time ]; then
    log "Installing GNU time"
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time >/dev/null
fi

log "Building traffic (release)"
(cd "$ROOT" && $SWIFT build -c release --static-swift-stdlib --experimental-lto-mode=full --product traffic >&2)  # as `make build`
TRAFFIC=$ROOT/.build/release/traffic

log "Building the benchmark tools"
for product in traffic-bench-gen traffic-bench-floor; do
    $SWIFT build -c release --package-path "$ROOT/Benchmarks" --scratch-path "$SCRATCH" --product "$product" >&2
done
GEN=$SCRATCH/release/traffic-bench-gen
FLOOR=$SCRATCH/release/traffic-bench-floor

# Generates the capture of size $1 unless it is cached and newer than the generator; prints its path.
# With $2 = tls: the HTTPS variant (bench-SIZE-tls.pcap and its key log bench-SIZE-tls.keylog); with $2 = h2:
# the HTTP/2 variant (bench-SIZE-h2.pcap); with $2 = quic: HTTP/3 over QUIC (bench-SIZE-quic.pcap and
# bench-SIZE-quic.keylog); with $2 = api: the API-dense capture (bench-SIZE-api.pcap). A generation is timed
# (wall, peak RSS) as run g, gtls, gh2, gquic or gapi.
: >"$WORK/generation"
capture_for() {
    local size=$1 stem=$CAPTURES/bench-$1${2:+-$2}
    local file=$stem.pcap
    mkdir -p "$CAPTURES"
    if [ "${BENCH_REGENERATE:-0}" = 1 ] || [ ! -s "$file" ] || [ "$GEN" -nt "$file" ] \
        || [ ! -s "$stem.MANIFEST.json" ] || { { [ "${2:-}" = tls ] || [ "${2:-}" = quic ]; } && [ ! -s "$stem.keylog" ]; }; then
        log "Generating $file"
        local start end
        start=$(date +%s%N)
        /usr/bin/time -f "%M" -o "$WORK/gen-time" "$GEN" --size "$size" --seed "$SEED" ${2:+--$2} "$file" >&2
        end=$(date +%s%N)
        echo "g${2:-} $size $(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }') $(tail -n 1 "$WORK/gen-time") $(stat -c %s "$file")" \
            >>"$WORK/generation"
    fi
    printf '%s\n' "$file"
}

# measure NAME COMMAND...: runs COMMAND BENCH_RUNS times (default 3) with stdout to /dev/null; records
# "NAME wall rss" (the shortest wall time: other load only ever adds; the largest peak RSS) or "NAME failed".
measure() {
    local name=$1
    shift
    log "[$name] $*"
    local start end wall best="" rss=0 run
    for run in $(seq "${BENCH_RUNS:-3}"); do
        start=$(date +%s%N)
        # Wall time from date(1) in nanoseconds (GNU time's %e has only 10 ms resolution); peak RSS from %M.
        if ! /usr/bin/time -f "%M" -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr"; then
            log "[$name] failed: $(tail -n 3 "$WORK/stderr")"
            echo "$name failed" >>"$WORK/results"
            return
        fi
        end=$(date +%s%N)
        wall=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
        if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$wall; fi
        rss=$(awk -v a="$(tail -n 1 "$WORK/time")" -v b="$rss" 'BEGIN { print (a > b) ? a : b }')
    done
    echo "$name $best $rss" >>"$WORK/results"
}
na() { echo "$1 n/a" >>"$WORK/results"; }

: >"$WORK/results"
: >"$WORK/failures"
HAS_ANALYZE=0
if "$TRAFFIC" --help 2>/dev/null | grep -E '^[[:space:]]+analyze([[:space:]]|$)' >/dev/null; then HAS_ANALYZE=1; fi
# (grep reads the whole help: with -q it could exit first and fail the pipeline with SIGPIPE under pipefail.)
has_option() { "$TRAFFIC" analyze --help 2>/dev/null | grep -- "$1" >/dev/null; }
# In the cleartext capture's absence (BENCH_VARIANT=h2 or https) its rows are not run.
FILE=
FILE_BYTES=0
PACKETS=0

if [ $RUN_HTTP = 1 ]; then
FILE=$(capture_for "$SIZE")
FILE_BYTES=$(stat -c %s "$FILE")

# (a) The floor; it also warms the page cache for the runs after it.
"$FLOOR" "$FILE" >/dev/null
PACKETS=$("$FLOOR" "$FILE" | sed -n 's/.*packets=\([0-9]*\).*/\1/p')
measure a "$FLOOR" "$FILE"

# (b)–(d): traffic analyze, or traffic connections while analyze does not exist yet.
if [ $HAS_ANALYZE = 1 ]; then
    B_LABEL="traffic analyze"
    measure b "$TRAFFIC" analyze "$FILE"
    if has_option --jobs; then
        measure b1 "$TRAFFIC" analyze --jobs 1 "$FILE"
        measure b2 "$TRAFFIC" analyze --jobs 2 "$FILE"
        measure n1 "$TRAFFIC" analyze --jobs 1 --normalize-paths "$FILE"
        measure n2 "$TRAFFIC" analyze --jobs 2 --normalize-paths "$FILE"
    else
        na b2
    fi
    if has_option --overhead; then measure c "$TRAFFIC" analyze --overhead all "$FILE"; else na c; fi
    if has_option --messages; then measure d "$TRAFFIC" analyze --messages --format csv "$FILE"; else na d; fi
    # NDJSON (issue 27): records streamed; its memory must stay flat, so it is measured on 100 MiB too.
    if "$TRAFFIC" analyze --help 2>/dev/null | grep ndjson >/dev/null; then
        measure nd "$TRAFFIC" analyze --format ndjson "$FILE"
        SMALL_FILE=$(capture_for 100MiB)
        SMALL_FILE_BYTES=$(stat -c %s "$SMALL_FILE")
        measure nds "$TRAFFIC" analyze --format ndjson "$SMALL_FILE"
    fi
else
    B_LABEL="traffic connections (stand-in)"
    measure b "$TRAFFIC" connections "$FILE"
    if "$TRAFFIC" connections --help 2>/dev/null | grep -- --jobs >/dev/null; then
        measure b2 "$TRAFFIC" connections --jobs 2 "$FILE"
    else
        na b2
    fi
    na c
    na d
fi
fi

# (h) HTTPS: the same exchanges in TLS 1.2/1.3, decrypted with the generator's key log.
HAS_KEYLOG=0
if [ $RUN_TLS = 1 ] && [ $HAS_ANALYZE = 1 ] && has_option --keylog; then
    HAS_KEYLOG=1
    TLS_FILE=$(capture_for "$SIZE" tls)
    TLS_KEYS=${TLS_FILE%.pcap}.keylog
    TLS_FILE_BYTES=$(stat -c %s "$TLS_FILE")
    "$FLOOR" "$TLS_FILE" >/dev/null  # into the page cache
    TLS_PACKETS=$("$FLOOR" "$TLS_FILE" | sed -n 's/.*packets=\([0-9]*\).*/\1/p')
    measure h "$TRAFFIC" analyze --keylog "$TLS_KEYS" "$TLS_FILE"
    if has_option --jobs; then
        measure h1 "$TRAFFIC" analyze --jobs 1 --keylog "$TLS_KEYS" "$TLS_FILE"
        measure h2 "$TRAFFIC" analyze --jobs 2 --keylog "$TLS_KEYS" "$TLS_FILE"
    fi
elif [ $RUN_TLS = 1 ]; then
    na h
fi

# (h2c) HTTP/2 with prior knowledge: the same exchanges as the cleartext capture, multiplexed, HPACK headers.
if [ $RUN_H2 = 1 ]; then
    H2_FILE=$(capture_for "$SIZE" h2)
    H2_FILE_BYTES=$(stat -c %s "$H2_FILE")
    "$FLOOR" "$H2_FILE" >/dev/null  # into the page cache
    H2_PACKETS=$("$FLOOR" "$H2_FILE" | sed -n 's/.*packets=\([0-9]*\).*/\1/p')
    measure a2 "$FLOOR" "$H2_FILE"
    if [ $HAS_ANALYZE = 1 ]; then
        measure h2c "$TRAFFIC" analyze "$H2_FILE"
        if has_option --jobs; then
            measure h2c1 "$TRAFFIC" analyze --jobs 1 "$H2_FILE"
            measure h2c2 "$TRAFFIC" analyze --jobs 2 "$H2_FILE"
        fi
    else
        na h2c
    fi
fi

# (q) HTTP/3 over QUIC: the same exchanges as the cleartext capture, keyless (quic records) and with the key log
# (HTTP/3 records). Its speed goal is relative to (b) in the same run, so VARIANT=quic measures (b) too.
HAS_QUIC=0
if [ $RUN_QUIC = 1 ] && [ $HAS_ANALYZE = 1 ] && has_option --keylog; then
    HAS_QUIC=1
    if [ -z "$FILE" ]; then
        FILE=$(capture_for "$SIZE")
        FILE_BYTES=$(stat -c %s "$FILE")
        "$FLOOR" "$FILE" >/dev/null
        PACKETS=$("$FLOOR" "$FILE" | sed -n 's/.*packets=\([0-9]*\).*/\1/p')
        B_LABEL="traffic analyze"
        measure b "$TRAFFIC" analyze "$FILE"
    fi
    QUIC_FILE=$(capture_for "$SIZE" quic)
    QUIC_KEYS=${QUIC_FILE%.pcap}.keylog
    QUIC_FILE_BYTES=$(stat -c %s "$QUIC_FILE")
    "$FLOOR" "$QUIC_FILE" >/dev/null  # into the page cache
    QUIC_PACKETS=$("$FLOOR" "$QUIC_FILE" | sed -n 's/.*packets=\([0-9]*\).*/\1/p')
    measure a3 "$FLOOR" "$QUIC_FILE"
    measure q "$TRAFFIC" analyze "$QUIC_FILE"
    has_option --jobs && measure q1 "$TRAFFIC" analyze --jobs 1 "$QUIC_FILE"
    measure qk "$TRAFFIC" analyze --keylog "$QUIC_KEYS" "$QUIC_FILE"
    has_option --jobs && measure qk1 "$TRAFFIC" analyze --jobs 1 --keylog "$QUIC_KEYS" "$QUIC_FILE"
elif [ $RUN_QUIC = 1 ]; then
    na q
fi

# (ab) The API-dense capture: the cost per message, not per byte, decides here.
if [ $RUN_API = 1 ]; then
    API_FILE=$(capture_for "$SIZE" api)
    API_FILE_BYTES=$(stat -c %s "$API_FILE")
    "$FLOOR" "$API_FILE" >/dev/null  # into the page cache
    API_PACKETS=$("$FLOOR" "$API_FILE" | sed -n 's/.*packets=\([0-9]*\).*/\1/p')
    measure aa "$FLOOR" "$API_FILE"
    if [ $HAS_ANALYZE = 1 ]; then
        measure ab "$TRAFFIC" analyze "$API_FILE"
        if has_option --jobs; then
            measure ab1 "$TRAFFIC" analyze --jobs 1 "$API_FILE"
            # Where ab1's time goes, for reading the ratios: abr is traffic's own reading (libpcap through the
            # 1 MiB stdio buffer of `CaptureFile`, every packet dropped by the BPF filter before it is analysed),
            # abn1 the whole analysis with the ~100 000 groups collapsed to ~20.
            measure abr "$TRAFFIC" analyze --jobs 1 --filter udp "$API_FILE"
            measure abn1 "$TRAFFIC" analyze --jobs 1 --normalize-paths "$API_FILE"
            # abh and abh1: the same runs grouped by host alone (6 groups instead of ~96 000 host/path groups,
            # and no path normalized per message): what the groups cost, and the ratios without them.
            measure abh "$TRAFFIC" analyze --group-by host "$API_FILE"
            measure abh1 "$TRAFFIC" analyze --jobs 1 --group-by host "$API_FILE"
        else
            na ab1
        fi
    else
        na ab
    fi
fi

# (e) tshark, the reference for speed.
if [ $RUN_HTTP = 1 ] && [ "${BENCH_TSHARK:-1}" != 0 ] && command -v tshark >/dev/null 2>&1; then
    BENCH_RUNS=1 measure e tshark -q -z http,tree -r "$FILE"  # a minute a run; one is plenty
elif [ $RUN_HTTP = 1 ]; then
    na e
fi

describe() {
    case $1 in
    a) echo "libpcap read loop (floor)" ;;
    b) echo "$B_LABEL" ;;
    b1) echo "$B_LABEL --jobs 1" ;;
    b2) echo "$B_LABEL --jobs 2" ;;
    n1) echo "$B_LABEL --jobs 1 --normalize-paths" ;;
    n2) echo "$B_LABEL --jobs 2 --normalize-paths" ;;
    c) echo "traffic analyze --overhead all" ;;
    d) echo "traffic analyze --messages --format csv" ;;
    nd) echo "traffic analyze --format ndjson" ;;
    nds) echo "traffic analyze --format ndjson (100 MiB capture)" ;;
    e) echo "tshark -q -z http,tree" ;;
    h) echo "HTTPS: traffic analyze --keylog" ;;
    h1) echo "HTTPS: traffic analyze --keylog --jobs 1" ;;
    h2) echo "HTTPS: traffic analyze --keylog --jobs 2" ;;
    a2) echo "HTTP/2: libpcap read loop (floor)" ;;
    h2c) echo "HTTP/2: traffic analyze" ;;
    h2c1) echo "HTTP/2: traffic analyze --jobs 1" ;;
    h2c2) echo "HTTP/2: traffic analyze --jobs 2" ;;
    a3) echo "QUIC: libpcap read loop (floor)" ;;
    q) echo "QUIC: traffic analyze (no keys)" ;;
    q1) echo "QUIC: traffic analyze --jobs 1 (no keys)" ;;
    qk) echo "QUIC: traffic analyze --keylog (HTTP/3)" ;;
    qk1) echo "QUIC: traffic analyze --keylog --jobs 1" ;;
    aa) echo "API: libpcap read loop (floor)" ;;
    ab) echo "API: traffic analyze" ;;
    ab1) echo "API: traffic analyze --jobs 1" ;;
    abr) echo "API: --jobs 1 --filter udp (its reading)" ;;
    abn1) echo "API: --jobs 1 --normalize-paths" ;;
    abh) echo "API: --group-by host" ;;
    abh1) echo "API: --jobs 1 --group-by host" ;;
    esac
}

echo
[ -n "$FILE" ] && echo "Capture: $FILE ($FILE_BYTES bytes, $PACKETS packets; manifest ${FILE%.pcap}.MANIFEST.json)"
[ $HAS_QUIC = 1 ] && echo "QUIC: $QUIC_FILE ($QUIC_FILE_BYTES bytes, $QUIC_PACKETS packets; key log $QUIC_KEYS)"
[ $RUN_API = 1 ] && echo "API: $API_FILE ($API_FILE_BYTES bytes, $API_PACKETS packets; manifest ${API_FILE%.pcap}.MANIFEST.json)"
[ $RUN_H2 = 1 ] && echo "HTTP/2: $H2_FILE ($H2_FILE_BYTES bytes, $H2_PACKETS packets; manifest ${H2_FILE%.pcap}.MANIFEST.json)"
echo "Machine: $(nproc) cores, $(uname -sm); traffic: $("$TRAFFIC" --version 2>/dev/null || echo '?')"
echo
printf '%-4s %-42s %9s %9s %12s %10s\n' "" "run" "wall s" "MB/s" "packets/s" "RSS MiB"
while read -r name wall rss; do
    if [ "$wall" = n/a ] || [ "$wall" = failed ]; then
        printf '%-4s %-42s %9s %9s %12s %10s\n' "$name" "$(describe "$name")" "$wall" "$wall" "$wall" "$wall"
        continue
    fi
    bytes=$FILE_BYTES packets=$PACKETS
    case $name in
    a2 | h2c*) bytes=$H2_FILE_BYTES packets=$H2_PACKETS ;;
    a3 | q*) bytes=$QUIC_FILE_BYTES packets=$QUIC_PACKETS ;;
    aa | ab*) bytes=$API_FILE_BYTES packets=$API_PACKETS ;;
    h*) bytes=$TLS_FILE_BYTES packets=$TLS_PACKETS ;;
    esac
    awk -v n="$name" -v d="$(describe "$name")" -v w="$wall" -v r="$rss" -v b="$bytes" -v p="$packets" 'BEGIN {
        s = (w > 0) ? w : 0.005
        printf "%-4s %-42s %9.3f %9.1f %12.0f %10.1f\n", n, d, w, b / s / 1e6, p / s, r / 1024
    }'
done <"$WORK/results"
if [ -s "$WORK/generation" ]; then
    echo
    echo "Generation (traffic-bench-gen, this run):"
    while read -r name size wall rss bytes; do
        awk -v n="$name" -v z="$size" -v w="$wall" -v r="$rss" -v b="$bytes" 'BEGIN {
            printf "  %-5s --size %-7s %12d bytes in %7.3f s (%6.1f MB/s), peak RSS %6.1f MiB\n", n, z, b, w, b / w / 1e6, r / 1024
        }'
    done <"$WORK/generation"
fi

wall_of() { awk -v n="$1" '$1 == n && $2 != "n/a" && $2 != "failed" { print $2 }' "$WORK/results"; }
# ratio A B [FORMAT]: A's wall time over B's, printed with FORMAT (default "%.2fx the time").
ratio() {
    local x y
    x=$(wall_of "$1")
    y=$(wall_of "$2")
    if [ -n "$x" ] && [ -n "$y" ]; then
        awk -v x="$x" -v y="$y" -v f="${3:-%.2fx the time}" 'BEGIN { if (y > 0) printf f, x / y; else print "inf" }'
    else
        echo n/a
    fi
}
echo
if [ $RUN_HTTP = 1 ]; then
    echo "b/a (traffic vs the libpcap floor): $(ratio b a)"
    echo "b/e (traffic vs tshark):            $(ratio b e); traffic is $(ratio e b '%.1fx faster')"
    echo "n2/e (--normalize-paths --jobs 2):  traffic is $(ratio e n2 '%.1fx faster')"
fi
# speed_goal RUN FLOOR GOAL LABEL: RUN's speed as a fraction of FLOOR's (same capture, same run) against GOAL.
speed_goal() {
    local x y r
    x=$(wall_of "$1")
    y=$(wall_of "$2")
    r=$(awk -v n="$1" '$1 == n && $2 != "n/a" && $2 != "failed" { print $3 }' "$WORK/results")
    if [ -n "$x" ] && [ -n "$y" ]; then
        awk -v x="$x" -v y="$y" -v g="$3" -v l="$4" -v r="$r" 'BEGIN {
            s = (x > 0) ? y / x : 0
            printf "%-44s %.2f of the read loop (goal >= %.2f): %s; peak RSS %.1f MiB (goal <= 64): %s\n", l, s, g, (s >= g) ? "met" : "missed", r / 1024, (r / 1024 <= 64) ? "met" : "missed"
        }'
    fi
}
if [ $RUN_HTTP = 1 ]; then
    speed_goal b a 0.95 "bulk, default options (b/a):"
    speed_goal b1 a 0.50 "bulk, --jobs 1 (b1/a):"
fi
if [ -n "$(wall_of nd)" ]; then
    awk -v w="$(wall_of nd)" -v b="$FILE_BYTES" -v r="$(awk '$1 == "nd" { print $3 }' "$WORK/results")" \
        -v rs="$(awk '$1 == "nds" { print $3 }' "$WORK/results")" -v ws="$(wall_of nds)" -v bs="${SMALL_FILE_BYTES:-0}" 'BEGIN {
        m = b / w / 1e6
        printf "nd (NDJSON, default options): %.0f MB/s (goal >= 1000): %s; peak RSS %.1f MiB vs %.1f MiB on 100 MiB (%.0f MB/s there): %s\n", m, (m >= 1000) ? "met" : "missed", r / 1024, rs / 1024, (ws > 0 ? bs / ws / 1e6 : 0), (r <= rs * 1.15 + 4096) ? "flat" : "grows"
    }'
fi
if [ $RUN_API = 1 ]; then
    speed_goal ab aa 0.80 "API-dense, default options (ab/aa):"
    speed_goal ab1 aa 0.50 "API-dense, --jobs 1 (ab1/aa):"
    if [ -n "$(wall_of abr)" ] && [ -n "$(wall_of abn1)" ]; then
        awk -v r="$(wall_of abr)" -v n="$(wall_of abn1)" -v j="$(wall_of ab1)" -v a="$(wall_of aa)" 'BEGIN {
            printf "API-dense, --jobs 1 split: reading %.3f s (the floor %.3f s), packets and messages %.3f s, groups %.3f s\n", r, a, n - r, j - n
        }'
    fi
    if [ -n "$(wall_of abh)" ] && [ -n "$(wall_of abh1)" ]; then
        awk -v h="$(wall_of abh)" -v h1="$(wall_of abh1)" -v d="$(wall_of ab)" -v j="$(wall_of ab1)" -v a="$(wall_of aa)" 'BEGIN {
            printf "API-dense, grouped by host (6 groups): default %.2f and --jobs 1 %.2f of the read loop; the host/path groups cost %.3f s (default) and %.3f s (--jobs 1)\n", a / h, a / h1, d - h, j - h1
        }'
    fi
fi
if [ $RUN_H2 = 1 ] && [ -n "$(wall_of h2c)" ]; then
    awk -v w="$(wall_of h2c)" -v b="$H2_FILE_BYTES" -v r="$(awk '$1 == "h2c" { print $3 }' "$WORK/results")" 'BEGIN {
        m = b / w / 1e6
        printf "h2c (HTTP/2, default options): %.0f MB/s (goal >= 1000): %s; peak RSS %.1f MiB (goal <= 64): %s\n", m, (m >= 1000) ? "met" : "missed", r / 1024, (r / 1024 <= 64) ? "met" : "missed"
    }'
    echo "h2c/a2 (HTTP/2 vs the libpcap floor): $(ratio h2c a2)"
    [ $RUN_HTTP = 1 ] && echo "h2c vs b (the same exchanges as HTTP/1.1): $(ratio h2c b)"
fi
if [ $HAS_QUIC = 1 ]; then
    rss_of() { awk -v n="$1" '$1 == n && $2 != "n/a" && $2 != "failed" { print $3 }' "$WORK/results"; }
    if [ -n "$(wall_of q)" ]; then
        awk -v w="$(wall_of q)" -v b="$QUIC_FILE_BYTES" -v r="$(rss_of q)" 'BEGIN {
            m = b / w / 1e6
            printf "q (QUIC without keys, default options): %.0f MB/s (goal >= 1000): %s; peak RSS %.1f MiB\n", m, (m >= 1000) ? "met" : "missed", r / 1024
        }'
    fi
    qk=$(wall_of qk)
    bb=$(wall_of b)
    if [ -n "$qk" ] && [ -n "$bb" ]; then
        awk -v q="$qk" -v b="$bb" -v qf="$QUIC_FILE_BYTES" -v bf="$FILE_BYTES" -v r="$(rss_of qk)" 'BEGIN {
            t = b / q; m = (qf / q) / (bf / b)
            printf "qk vs b (HTTP/3 with --keylog vs cleartext HTTP/1.1, default options): %.2f of the exchanges/s, %.2f of the MB/s (%.0f vs %.0f MB/s; goal >= 0.60): %s; peak RSS %.1f MiB\n", t, m, qf / q / 1e6, bf / b / 1e6, (t >= 0.6) ? "met" : "missed", r / 1024
        }'
    fi
    echo "qk/a3 (HTTP/3 with keys vs the libpcap floor): $(ratio qk a3); q/a3: $(ratio q a3)"
fi
if [ $HAS_KEYLOG = 1 ]; then
    # Both captures carry the same HTTP exchanges; the HTTPS file is larger by its handshakes and record overhead.
    hb=$(wall_of h)
    bb=$(wall_of b)
    if [ -n "$hb" ] && [ -n "$bb" ]; then
        echo "HTTPS: $TLS_FILE ($TLS_FILE_BYTES bytes, $TLS_PACKETS packets; key log $TLS_KEYS)"
        awk -v h="$hb" -v b="$bb" -v hf="$TLS_FILE_BYTES" -v bf="$FILE_BYTES" 'BEGIN {
            t = b / h; m = (hf / h) / (bf / b)
            printf "h vs b (HTTPS vs cleartext, default options): %.2f of the exchanges/s, %.2f of the MB/s (goal >= 0.60): %s\n", t, m, (t >= 0.6) ? "met" : "missed"
        }'
        awk -v r="$(awk '$1 == "h" { print $3 }' "$WORK/results")" 'BEGIN {
            printf "h peak RSS: %.1f MiB (goal <= 64 MiB): %s\n", r / 1024, (r / 1024 <= 64) ? "met" : "missed"
        }'
    fi
    if has_option --jobs; then
        "$TRAFFIC" analyze --jobs 1 --keylog "$TLS_KEYS" --format json "$TLS_FILE" >"$WORK/h1.json" 2>/dev/null || true
        "$TRAFFIC" analyze --jobs 2 --keylog "$TLS_KEYS" --format json "$TLS_FILE" >"$WORK/h2.json" 2>/dev/null || true
        if [ -s "$WORK/h1.json" ] && cmp -s "$WORK/h1.json" "$WORK/h2.json"; then
            echo "HTTPS --jobs 1 vs --jobs 2: identical output ($(wc -c <"$WORK/h1.json") bytes of JSON)"
        else
            echo "HTTPS --jobs 1 vs --jobs 2: output DIFFERS"
        fi
    fi
fi

# Correctness: the analyzer's per host+path numbers must equal the generator's ground truth. A check that
# fails is reported here and makes the script exit 1 at the end.
# verify LABEL ANALYZE-ARGS... -- CHECK-ARGS...: runs traffic analyze (output to $WORK/verify.out) and
# check-manifest.py on it.
verify() {
    local label=$1 analyze=() check=()
    shift
    while [ "$1" != -- ]; do analyze+=("$1"); shift; done
    shift
    check=("$@")
    log "[$label] traffic analyze ${analyze[*]}"
    if ! "$TRAFFIC" analyze "${analyze[@]}" >"$WORK/verify.out" 2>"$WORK/stderr"; then
        echo "$label: FAILED: traffic analyze failed: $(tail -n 3 "$WORK/stderr")"
        echo "$label" >>"$WORK/failures"
        return
    fi
    if python3 "$ROOT/Benchmarks/check-manifest.py" "$WORK/verify.out" "${check[@]}" >"$WORK/check" 2>&1; then
        awk -v l="$label" '{ print l ": " $0 }' "$WORK/check"
    else
        awk -v l="$label" '{ print l ": " $0 }' "$WORK/check"
        echo "$label: FAILED (the analyzer's numbers differ from the generator's manifest)"
        echo "$label" >>"$WORK/failures"
    fi
}
if [ "${BENCH_VERIFY:-1}" != 0 ] && [ $HAS_ANALYZE = 1 ]; then
    echo
    if [ $RUN_HTTP = 1 ]; then
        verify verify --normalize-paths --format csv "$FILE" -- "${FILE%.pcap}.MANIFEST.json"
    fi
    if [ $HAS_KEYLOG = 1 ]; then
        # The decrypted groups must be the cleartext capture's, byte for byte, and every connection decrypted.
        # (--same-as only when the cleartext capture of this run is there to compare with.)
        verify "verify HTTPS" --keylog "$TLS_KEYS" --normalize-paths --format json "$TLS_FILE" -- \
            "${TLS_FILE%.pcap}.MANIFEST.json" ${FILE:+--same-as "${FILE%.pcap}.MANIFEST.json"}
    fi
    if [ $RUN_API = 1 ]; then
        verify "verify API" --normalize-paths --format csv "$API_FILE" -- "${API_FILE%.pcap}.MANIFEST.json"
    fi
    if [ $RUN_H2 = 1 ]; then
        # The HTTP/2 groups and summary against the generator's expected totals (the manifest's "http2" object);
        # with the cleartext manifest of the same run, also that both captures carry the same exchanges.
        verify "verify HTTP/2" --normalize-paths --format json "$H2_FILE" -- \
            "${H2_FILE%.pcap}.MANIFEST.json" ${FILE:+--same-as "${FILE%.pcap}.MANIFEST.json"}
    fi
fi

if [ "${BENCH_VERIFY:-1}" != 0 ] && [ $HAS_QUIC = 1 ]; then
    # With keys: the HTTP/3 groups and summary against the manifest (and the cleartext manifest: the same exchanges);
    # without: one (quic) record pair per connection, Σ transfer_bytes = the UDP payload per direction and host.
    verify "verify QUIC" --keylog "$QUIC_KEYS" --normalize-paths --format json "$QUIC_FILE" -- \
        "${QUIC_FILE%.pcap}.MANIFEST.json" ${FILE:+--same-as "${FILE%.pcap}.MANIFEST.json"}
    verify "verify QUIC keyless" --format json "$QUIC_FILE" -- "${QUIC_FILE%.pcap}.MANIFEST.json" --keyless
fi

# Peak RSS of (b) on 100 MiB vs 1 GiB: a streaming analyzer should hold it roughly flat.
if [ "${BENCH_SCALING:-0}" = 1 ] && [ $RUN_HTTP = 1 ]; then
    : >"$WORK/results"
    for size in 100MiB 1GiB; do
        file=$(capture_for "$size")
        if [ $HAS_ANALYZE = 1 ]; then
            measure "$size" "$TRAFFIC" analyze "$file"
            measure "$size-normalized" "$TRAFFIC" analyze --normalize-paths "$file"
        else
            measure "$size" "$TRAFFIC" connections "$file"
        fi
    done
    echo
    echo "Scaling, $B_LABEL:"
    while read -r name wall rss; do
        if [ "$wall" = failed ]; then echo "  $name: failed"; continue; fi
        awk -v n="$name" -v w="$wall" -v r="$rss" 'BEGIN { printf "  %-17s wall %8.3f s  peak RSS %8.1f MiB\n", n, w, r / 1024 }'
    done <"$WORK/results"
fi

if [ -s "$WORK/failures" ]; then
    echo
    echo "bench: verification FAILED: $(paste -sd, "$WORK/failures" | sed 's/,/, /g')"
    exit 1
fi
