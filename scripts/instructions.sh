#!/usr/bin/env bash
# Instruction counts of whole runs, under callgrind, against committed limits (`make bench-instructions`).
#
# Wall time on a shared 2-core VM drifts by ±10 %; instruction counts do not. This runs `traffic analyze
# --jobs 1` (one thread: counts do not depend on scheduling) on the generated 100 MiB bench capture (seed 1,
# deterministic) in the formats below and fails when a count exceeds its limit in
# Benchmarks/instruction-limits.txt (the count measured when the limit was set, plus 2 %). A change that makes
# the engine cheaper should lower the limits in the same commit.
#
# The binary is stripped of debug info first: valgrind 3.19 cannot read the DWARF of a Swift 6.3 release
# build ("Possibly corrupted debuginfo file") and gives up; symbols stay, so callgrind_annotate still works on
# the .out files left in .build/instructions/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SWIFT=${SWIFT:-swift}
LIMITS=$ROOT/Benchmarks/instruction-limits.txt
OUT=$ROOT/.build/instructions
mkdir -p "$OUT" "$ROOT/.build/bench"
command -v valgrind >/dev/null || {
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq valgrind >/dev/null
}
(cd "$ROOT" && $SWIFT build -c release --static-swift-stdlib --experimental-lto-mode=full --product traffic >&2)
$SWIFT build -c release --package-path "$ROOT/Benchmarks" --scratch-path "$ROOT/.build-bench" --product traffic-bench-gen >&2
CAPTURE=$ROOT/.build/bench/bench-100MiB.pcap
[ -s "$CAPTURE" ] || "$ROOT/.build-bench/release/traffic-bench-gen" --size 100MiB --seed 1 "$CAPTURE" >&2
objcopy --strip-debug "$ROOT/.build/release/traffic" "$OUT/traffic"

status=0
while IFS='|' read -r name limit arguments; do
    case "$name" in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.out" "$OUT/traffic" analyze --jobs 1 $arguments \
        "$CAPTURE" >/dev/null 2>"$OUT/$name.log"
    count=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$OUT/$name.log")
    verdict=ok
    if [ "$count" -gt "$limit" ]; then verdict="OVER by $(( (count - limit) * 1000 / limit ))‰"; status=1; fi
    printf '%-12s %13s instructions (limit %13s) %s\n' "$name" "$count" "$limit" "$verdict"
done < "$LIMITS"
exit $status
