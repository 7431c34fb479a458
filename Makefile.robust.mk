# Robustness targets (issue 8), included from the main Makefile.
#
#   make fuzz                 each libFuzzer target for FUZZ_SECONDS (default 60), seeded from Fuzz/corpus/
#   make fuzz FUZZ_TARGETS=FuzzHTTP FUZZ_SECONDS=600
#   make test-robust          the slow robustness tests left out of `make test` (the 1 M-SYN flood)
#   make test-sanitize        the test suite under AddressSanitizer, then ThreadSanitizer
#   make malformed            regenerate samples/malformed/ (python3 only)
#   make fuzz-corpus          regenerate Fuzz/corpus/ from samples/
#
# Fuzzing finds go to .build-fuzz/artifacts/ (crash-*, timeout-*, oom-*); replay one with
# `.build-fuzz/debug/FuzzHTTP .build-fuzz/artifacts/crash-…`. New coverage goes to .build-fuzz/corpus/,
# never into the committed seeds.

SWIFT         ?= swift
FUZZ_SECONDS  ?= 60
FUZZ_TARGETS  ?= FuzzPackets FuzzHTTP FuzzChunked FuzzContent
# libFuzzer options: a per-input timeout catches hangs, the RSS limit catches unbounded memory.
FUZZ_FLAGS    ?= -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1
# The sanitizer runs use a smaller SYN flood: the 1 M one takes minutes under the sanitizers.
SANITIZE_SYN_FLOOD ?= 200000

.PHONY: fuzz fuzz-build fuzz-corpus test-robust test-sanitize test-asan test-tsan malformed

test-robust: deps
	$(SWIFT) build --build-tests
	TRAFFIC_ROBUST=1 $(SWIFT) test --skip-build --filter MalformedInputTests

# Swift 6.3 on Linux: `-sanitize=fuzzer` instruments every Swift target (the engine too) and links
# libFuzzer; each target's @main calls LLVMFuzzerRunDriver (see Fuzz/Package.swift).
# The build log is filtered: gold warns "Cannot export local symbol '__asan_check_…'" hundreds of times.
FUZZ_BUILD := $(SWIFT) build -c debug --package-path Fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address

fuzz-build: build-deps
	@mkdir -p .build-fuzz
	@echo "$(FUZZ_BUILD)"
	@if $(FUZZ_BUILD) >.build-fuzz/build.log 2>&1; then \
	  grep -v 'Cannot export local symbol' .build-fuzz/build.log | tail -1; \
	else grep -v 'Cannot export local symbol' .build-fuzz/build.log; exit 1; fi

fuzz: fuzz-build
	@mkdir -p .build-fuzz/artifacts
	@set -e; for target in $(FUZZ_TARGETS); do \
	  case $$target in \
	    FuzzPackets) seeds=packets ;; FuzzHTTP) seeds=http ;; FuzzChunked) seeds=chunked ;; FuzzContent) seeds=content ;; \
	    *) echo "unknown fuzz target $$target"; exit 2 ;; \
	  esac; \
	  mkdir -p .build-fuzz/corpus/$$seeds; \
	  echo "== $$target for $(FUZZ_SECONDS) s (seeds Fuzz/corpus/$$seeds)"; \
	  .build-fuzz/debug/$$target $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=.build-fuzz/artifacts/$$target- \
	    .build-fuzz/corpus/$$seeds Fuzz/corpus/$$seeds 2>&1 | grep -E '^(#[0-9]+ +DONE|stat::|==[0-9]+==|SUMMARY|Fatal|.*invariant broken|artifact_prefix|Test unit written|Done)' || true; \
	  if ls .build-fuzz/artifacts/$$target-* >/dev/null 2>&1; then \
	    echo "$$target: findings in .build-fuzz/artifacts/"; ls .build-fuzz/artifacts/$$target-*; exit 1; \
	  fi; \
	done

fuzz-corpus:
	python3 Fuzz/make-corpus.py

malformed:
	python3 samples/malformed/make-malformed.py

# The end-to-end tests run the plain binary in .build/ (Harness.binary), so build it first; the
# malformed captures are then also run through the sanitized binary directly.
test-sanitize: test-asan test-tsan

# LeakSanitizer reports a few objects that XCTest's runner, Foundation's Process and String(contentsOf:) never free
# (toolchain code, not ours): suppressed by library, so a leak in the engine still fails the run. The arguments of
# parameterized tests (TLSConversation fixtures) are kept by Swift Testing until exit: suppressed by that name only.
test-asan: deps
	$(SWIFT) build --product traffic
	$(SWIFT) build --scratch-path .build-asan --sanitize=address --build-tests
	@printf 'leak:libXCTest.so\nleak:libFoundation.so\nleak:libFoundationEssentials.so\nleak:TLSConversation\n' >.build-asan/lsan.supp
	LSAN_OPTIONS=suppressions=$(CURDIR)/.build-asan/lsan.supp TRAFFIC_ROBUST=1 TRAFFIC_SYN_FLOOD_COUNT=$(SANITIZE_SYN_FLOOD) \
	  $(SWIFT) test --scratch-path .build-asan --sanitize=address --skip-build
	@for file in samples/*.pcap samples/*.pcapng samples/*.gz samples/malformed/*.pcap samples/malformed/*.gz; do \
	  status=0; \
	  ASAN_OPTIONS=exitcode=99:detect_leaks=0 .build-asan/debug/traffic analyze --messages --format json "$$file" \
	    >/dev/null 2>.build-asan/stderr.txt || status=$$?; \
	  if [ $$status -ne 0 ] && [ $$status -ne 3 ]; then echo "ASan: $$file exited $$status"; cat .build-asan/stderr.txt; exit 1; fi; \
	done; echo "ASan: traffic analyze ran clean on every sample and malformed capture"

test-tsan: deps
	$(SWIFT) build --product traffic
	$(SWIFT) build --scratch-path .build-tsan --sanitize=thread --build-tests
	TRAFFIC_ROBUST=1 TRAFFIC_SYN_FLOOD_COUNT=$(SANITIZE_SYN_FLOOD) $(SWIFT) test --scratch-path .build-tsan --sanitize=thread --skip-build
