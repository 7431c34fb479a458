# traffic — two commands do everything: `make run` and `make test`.
SWIFT   ?= swift
PREFIX  ?= /usr/local
SAMPLE  ?= samples/http-basic.pcap
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# pkg-config name : Debian package
SYSTEM_PACKAGES := libpcap:libpcap-dev zlib:zlib1g-dev libbrotlidec:libbrotli-dev libzstd:libzstd-dev
# command : Debian package (python3 reads CSV back in the end-to-end tests)
TOOLS := pkg-config:pkg-config python3:python3
# The release binary links the Swift runtime and Foundation statically: a process then maps only what it
# touches (about 6 MiB less resident memory than loading the shared Foundation and ICU) and starts faster.
# Link-time optimization over the engine's modules (with the execution profile of Package.swift): −5 %
# instructions on the API-dense benchmark on top of the profile; a first build takes ~4.5 instead of ~3 minutes.
RELEASE := -c release --static-swift-stdlib --experimental-lto-mode=full

.PHONY: all deps build-deps browser-deps har-deps spark-deps build run test test-release install samples clean

all: build

# Everything the build and the tests need. The browser test of `--format html` needs chromium (Debian's package,
# not a download by Playwright) and Playwright for Python, which `browser-deps` adds; building needs neither.
deps: build-deps browser-deps har-deps spark-deps

# Installs only what is missing: pkg-config decides for libraries, `command -v` for tools.
build-deps:
	@missing=""; \
	for entry in $(TOOLS); do command -v "$${entry%%:*}" >/dev/null 2>&1 || missing="$$missing $${entry#*:}"; done; \
	for entry in $(SYSTEM_PACKAGES); do \
	  pkg-config --exists "$${entry%%:*}" 2>/dev/null || missing="$$missing $${entry#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# Chromium from apt; Playwright from PyPI through pip, only when `import playwright` fails. Debian's own python3
# refuses `pip install` outside a virtual environment (PEP 668: "externally-managed-environment"): a plain install
# is tried first (pyenv, venvs), then a user install, then a user install with --break-system-packages, which
# touches only ~/.local, never apt's files. Playwright is pointed at /usr/bin/chromium; `playwright install`
# (a browser download) is never run.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "Installing system packages: chromium"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium; }
	@python3 -m pip --version >/dev/null 2>&1 || { \
	  echo "Installing system packages: python3-pip"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends python3-pip; }
	@python3 -c 'import playwright.sync_api' >/dev/null 2>&1 || { \
	  echo "Installing Python packages: playwright"; \
	  python3 -m pip install -q playwright 2>/dev/null || \
	  python3 -m pip install -q --user playwright 2>/dev/null || \
	  python3 -m pip install -q --user --break-system-packages playwright; }

# The HAR test (`HARExportTests`, scripts/har-check.py) validates with jsonschema and reads the file back with
# haralyzer, a real HAR consumer; both from PyPI the way Playwright is installed above, only when missing.
har-deps:
	@python3 -m pip --version >/dev/null 2>&1 || { \
	  echo "Installing system packages: python3-pip"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends python3-pip; }
	@python3 -c 'import jsonschema, haralyzer' >/dev/null 2>&1 || { \
	  echo "Installing Python packages: jsonschema haralyzer"; \
	  python3 -m pip install -q jsonschema haralyzer 2>/dev/null || \
	  python3 -m pip install -q --user jsonschema haralyzer 2>/dev/null || \
	  python3 -m pip install -q --user --break-system-packages jsonschema haralyzer; }

# The Spark recipe's test (`SparkJobTests`, scripts/spark/test_traffic_job.py) runs the job with pyspark from PyPI
# in local mode, on Java from Debian (default-jre-headless: Java 17 on bookworm, as pyspark 4 needs). Installed
# only when missing, the way har-deps installs from PyPI (measured: pip install pyspark 4.3.0, a 456 MB sdist,
# 71 s; apt-get update and default-jre-headless over an installed openjdk-17, 2 s). Optional: when an install
# fails, `make test` goes on and the Spark test prints SKIP with the reason.
spark-deps:
	@command -v java >/dev/null 2>&1 || { \
	  echo "Installing system packages: default-jre-headless"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends default-jre-headless; } || \
	  echo "spark-deps: Java could not be installed; the Spark test will be skipped"
	@python3 -c 'import pyspark' >/dev/null 2>&1 || { \
	  echo "Installing Python packages: pyspark"; \
	  { python3 -m pip --version >/dev/null 2>&1 || { \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends python3-pip; }; } && { \
	  python3 -m pip install -q pyspark 2>/dev/null || \
	  python3 -m pip install -q --user pyspark 2>/dev/null || \
	  python3 -m pip install -q --user --break-system-packages pyspark; }; } || \
	  echo "spark-deps: pyspark could not be installed; the Spark test will be skipped"

build: build-deps
	$(SWIFT) build $(RELEASE) --product traffic

run: build
	.build/release/traffic analyze $(SAMPLE)

# check-imports: an import of a target that is not a dependency builds only when SwiftPM's parallel build happens
# to order it first (a clean checkout failed CI where the incremental build passed); it is caught here instead.
test: deps
	python3 scripts/check-imports.py
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) test-release

# The binary `make build` ships is compiled with the execution profile and link-time optimization, which the debug
# build of the tests never is: the end-to-end suite runs once more, against it.
test-release: build
	TRAFFIC_TEST_BINARY="$(CURDIR)/.build/release/traffic" $(SWIFT) test --skip-build --filter EndToEndTests

install: build
	$(SUDO) install -d $(PREFIX)/bin
	$(SUDO) install -m 0755 .build/release/traffic $(PREFIX)/bin/traffic

# Regenerates the committed captures: needs root, nginx, curl, tcpdump and tshark (see samples/README.md).
samples:
	$(SUDO) samples/make-samples.sh

clean:
	rm -rf .build

include Makefile.bench.mk
include Makefile.robust.mk
