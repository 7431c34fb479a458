#!/usr/bin/env bash
# scripts/phases.sh CAPTURE [ANALYZE-ARGS...]: where a run of `traffic analyze` spends its wall time, from perf's
# samples (cpu-clock, so it works on VMs without hardware counters): when the reading ends, how long the report
# after it takes, how busy each thread is in both phases, and what the tail runs.
#
# Wall times on a shared VM move by ±10 % between runs; a phase's share and the tail's functions move much less.
# The reading is taken to end at the last sample in the read loop, the HTTP/1 parser or libpcap (the kernel's copy
# is no marker: the report reads its temporary files too). Uses .build/release/traffic (`make build` first) and
# perf (apt: linux-perf). Example: scripts/phases.sh .build/bench/bench-1GiB-api.pcap --jobs 1
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TRAFFIC=${TRAFFIC:-$ROOT/.build/release/traffic}
[ $# -ge 1 ] || { echo "usage: $0 CAPTURE [ANALYZE-ARGS...]" >&2; exit 2; }
command -v perf >/dev/null || { echo "phases: perf is missing (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$TRAFFIC" ] || { echo "phases: no $TRAFFIC (make build)" >&2; exit 2; }
CAPTURE=$1
shift
RATE=5000
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

perf record -q -F "$RATE" -e cpu-clock -o "$WORK/perf.data" "$TRAFFIC" analyze "$@" "$CAPTURE" >/dev/null 2>"$WORK/stderr" \
    || { cat "$WORK/stderr" >&2; exit 1; }
perf script -i "$WORK/perf.data" -F tid,time,ip,sym 2>/dev/null >"$WORK/samples"

python3 - "$WORK/samples" "$RATE" <<'EOF'
import collections, sys

rows = []
for line in open(sys.argv[1]):
    parts = line.split(None, 3)
    if len(parts) < 2:
        continue
    tid, time = parts[0], float(parts[1].rstrip(':'))
    symbol = parts[3].strip() if len(parts) > 3 else '?'
    rows.append((tid, time, symbol))
if not rows:
    sys.exit("phases: perf recorded no samples")
start, end = rows[0][1], rows[-1][1]
markers = ('CaptureB0V4read', 'HTTPMessageParser', 'pcap_next')
reading_end = max((t for _, t, s in rows if any(m in s for m in markers)), default=end)
interval = 1 / int(sys.argv[2])  # one sample a thread per this much of its CPU time
print(f"wall {1000 * (end - start):.0f} ms: reading {1000 * (reading_end - start):.0f} ms, "
      f"after it {1000 * (end - reading_end):.0f} ms")
for name, inside, span in (('reading', lambda t: t <= reading_end, reading_end - start),
                           ('after', lambda t: t > reading_end, end - reading_end)):
    busy = collections.Counter(tid for tid, t, _ in rows if inside(t))
    span = max(span, interval)
    threads = ', '.join(f"{tid}: {100 * n * interval / span:.0f} %" for tid, n in busy.most_common(4))
    print(f"  {name:8s} busy threads (share of the phase's wall time): {threads}")
tail = collections.Counter(s[:100] for _, t, s in rows if t > reading_end)
total = sum(tail.values())
if total:
    print(f"after the reading, {total} samples:")
    for symbol, n in tail.most_common(15):
        print(f"  {100 * n / total:5.1f} %  {symbol}")
EOF
