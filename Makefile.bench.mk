# Benchmarks: `include Makefile.bench.mk` from the main Makefile. See Benchmarks/README.md.
#   make bench                       whole-process benchmarks on a generated 1 GiB capture
#   make bench BENCH_SIZE=100MiB     a quicker run; also BENCH_TSHARK=0, BENCH_SCALING=1
#   make bench VARIANT=h2            only the HTTP/2 capture (default: cleartext, HTTPS, HTTP/2 and API-dense)
#   make bench VARIANT=api           only the API-dense capture (many small JSON calls: the cost per message)
#   make bench VARIANT=quic          HTTP/3 over QUIC, with and without keys (VARIANT=all: the four)
#   make bench-stages                per-stage micro-benchmarks (ordo-one/benchmark)
#   make bench-instructions          callgrind instruction counts against Benchmarks/instruction-limits.txt
SWIFT ?= swift
BENCH_VARIANT ?= $(VARIANT)
export BENCH_SIZE BENCH_TSHARK BENCH_SCALING BENCH_SEED BENCH_REGENERATE BENCH_RUNS BENCH_VERIFY BENCH_VARIANT

# Keep whatever default goal the including Makefile has, wherever the include line sits.
_bench_default_goal := $(.DEFAULT_GOAL)

.PHONY: bench bench-stages bench-instructions pgo-profile

bench: build-deps
	SWIFT="$(SWIFT)" scripts/bench.sh

bench-instructions: build-deps
	SWIFT="$(SWIFT)" scripts/instructions.sh

bench-stages: build-deps
	$(SWIFT) package --package-path Benchmarks benchmark

.DEFAULT_GOAL := $(_bench_default_goal)

# Remakes Benchmarks/pgo/traffic.profdata, the profile release builds are optimized with (scripts/pgo-profile.sh).
pgo-profile: build-deps
	SWIFT="$(SWIFT)" scripts/pgo-profile.sh
