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
RELEASE := -c release --static-swift-stdlib

.PHONY: all deps build run test install samples clean

all: build

# Installs only what is missing: pkg-config decides for libraries, `command -v` for tools.
deps:
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

build: deps
	$(SWIFT) build $(RELEASE) --product traffic

run: build
	.build/release/traffic analyze $(SAMPLE)

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

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
