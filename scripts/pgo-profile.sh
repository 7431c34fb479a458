#!/usr/bin/env bash
# `make pgo-profile`: remakes Benchmarks/pgo/traffic.profdata, the execution profile that release builds of the
# engine are optimized with (LLVM IR-level profile-guided optimization; see Package.swift).
#
# 1. builds `traffic` instrumented (-ir-profile-generate) in .build-pgo, without the current profile;
# 2. generates training captures with the benchmark generator, seed 2 (the benchmarks measure seed 1, so the
#    profile is not trained on the captures it is measured on): cleartext HTTP/1.1, API-dense, HTTPS with its key
#    log, HTTP/2 and HTTP/3 over QUIC with its key log, PGO_SIZE each (default 48MiB);
# 3. runs the analyses users run on them (every output format, --jobs 1 and the default, --overhead, --messages,
#    --normalize-paths, key logs, QUIC without keys) and every committed sample;
# 4. merges the counts into a sparse profile: functions never run are left out and compiled as without a profile
#    (not as cold code).
#
# Run it after changing hot code: a function whose control flow changed no longer matches its counts and is
# compiled without them (no error, only the speed of that function falls back). Takes ~4 minutes on 2 cores.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SWIFT=${SWIFT:-swift}
SIZE=${PGO_SIZE:-48MiB}
SCRATCH=${PGO_SCRATCH:-$ROOT/.build-pgo}
OUT=$ROOT/Benchmarks/pgo/traffic.profdata
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
log() { printf '%s\n' "$*" >&2; }

# The profile runtime and llvm-profdata ship with the Swift toolchain, next to swiftc.
TOOLCHAIN=$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")
RUNTIME=$TOOLCHAIN/lib/swift/clang/lib/linux/libclang_rt.profile-$(uname -m).a
PROFDATA=$TOOLCHAIN/bin/llvm-profdata
[ -f "$RUNTIME" ] || { log "pgo-profile: no profile runtime at $RUNTIME"; exit 1; }
[ -x "$PROFDATA" ] || { log "pgo-profile: no llvm-profdata at $PROFDATA"; exit 1; }

log "Building traffic instrumented (release, $SCRATCH)"
build_instrumented() {
    (cd "$ROOT" && TRAFFIC_PGO=0 $SWIFT build -c release --static-swift-stdlib --product traffic --scratch-path "$SCRATCH" \
        -Xswiftc -Xfrontend -Xswiftc "-ir-profile-generate=$WORK" \
        -Xlinker "$RUNTIME" -Xlinker -u__llvm_profile_runtime >&2)
}
# An incremental build can fail on its own stale modules. Seen: TrafficConcurrency taken as up to date without a
# newer file of it (LockedValue.swift listed in its output map, never compiled; probably a build cut short), and
# every importer failing with "cannot find 'LockedValue' in scope". Once, the engine's build folders and modules
# go (not the dependencies': BoringSSL alone takes minutes) and the build runs again.
forget_engine() {
    rm -rf "$1/$(uname -m)-unknown-linux-gnu/release/"Traffic*.build "$1/$(uname -m)-unknown-linux-gnu/release/Modules/"Traffic*
}
if ! build_instrumented; then
    log "pgo-profile: the instrumented build failed; building the engine's targets again"
    forget_engine "$SCRATCH"
    build_instrumented
fi
TRAFFIC=$SCRATCH/release/traffic

log "Building the capture generator"
build_generator() {
    $SWIFT build -c release --package-path "$ROOT/Benchmarks" --scratch-path "$ROOT/.build-bench" --product traffic-bench-gen >&2
}
if ! build_generator; then
    # The same in the benchmarks' folder, which compiles the engine's targets too.
    log "pgo-profile: the generator's build failed; building the engine's targets in .build-bench again"
    forget_engine "$ROOT/.build-bench"
    build_generator
fi
GEN=$ROOT/.build-bench/release/traffic-bench-gen

for variant in http api tls h2 quic; do
    flag=--$variant
    [ $variant = http ] && flag=""
    log "Generating the $variant training capture ($SIZE, seed 2)"
    "$GEN" --size "$SIZE" --seed 2 $flag "$WORK/$variant.pcap" >/dev/null
done

export LLVM_PROFILE_FILE=$WORK/traffic-%p.profraw
run() {
    log "[pgo] traffic $*"
    "$TRAFFIC" "$@" >/dev/null 2>&1 || log "[pgo] exit status $? (kept: warnings and errors are paths too)"
}
for variant in http api; do
    file=$WORK/$variant.pcap
    run analyze "$file"
    run analyze --jobs 1 "$file"
    run analyze --format json "$file"
    run analyze --format csv --jobs 1 "$file"
    run analyze --format ndjson "$file"
    run analyze --format html "$file"
    run analyze --format har --jobs 1 "$file"
    run analyze --messages --format csv "$file"
    run analyze --overhead all "$file"
    run analyze --overhead all --format json --jobs 1 "$file"
    run analyze --normalize-paths "$file"
    run analyze --normalize-paths --jobs 1 --timings "$file"
    run analyze --jobs 1 --groups-in-memory 2000 "$file"
    # A capture with more endpoints than `--groups-in-memory` (the 1 GiB API bench has ~96 000 groups): the table
    # written out several times, the runs merged, the report made from sorted runs in the temporary file. At
    # 48 MiB only a small limit takes these paths; without them parts of their loops were laid out as cold code.
    # Measured: −1.0 % instructions on a `--jobs 1` run of the 1 GiB API bench (5 585 → 5 530 M).
    run analyze --groups-in-memory 1000 "$file"
    run analyze --groups-in-memory 1000 --format csv "$file"
    run analyze --jobs 1 --groups-in-memory 1000 --format json "$file"
    run analyze --jobs 1 --groups-in-memory 700 "$file"
    run connections "$file"
done
run analyze --keylog "$WORK/tls.keylog" "$WORK/tls.pcap"
run analyze --keylog "$WORK/tls.keylog" --jobs 1 --format json "$WORK/tls.pcap"
run analyze "$WORK/tls.pcap"
run analyze "$WORK/h2.pcap"
run analyze --jobs 1 --format csv "$WORK/h2.pcap"
run analyze "$WORK/quic.pcap"
run analyze --keylog "$WORK/quic.keylog" "$WORK/quic.pcap"
run analyze --keylog "$WORK/quic.keylog" --jobs 1 "$WORK/quic.pcap"
for sample in "$ROOT"/samples/*.pcap "$ROOT"/samples/*.pcapng "$ROOT"/samples/*.pcap.gz; do
    [ -f "$sample" ] || continue
    keys=""
    for candidate in "${sample%.pcap}.keys" "${sample%.pcapng}.keys"; do [ -f "$candidate" ] && keys=$candidate; done
    run analyze ${keys:+--keylog "$keys"} "$sample"
done

mkdir -p "$(dirname "$OUT")"
"$PROFDATA" merge --sparse -o "$OUT" "$WORK"/*.profraw
log "Wrote $OUT ($(stat -c %s "$OUT") bytes, $(ls "$WORK"/*.profraw | wc -l) runs)"
# SwiftPM compiles nothing again for a new profile (it is no input it knows of, and an incremental build kept the
# old code even when the flag itself changed): the next release build starts from an empty release folder.
rm -rf "$ROOT/.build/$(uname -m)-unknown-linux-gnu/release" "$ROOT/.build/release"
log "Emptied .build's release folder: the next release build (make build) compiles with the new profile"
