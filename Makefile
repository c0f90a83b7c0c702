# neardup build and test entry points. `make test` is the README's test
# command and what CI runs (.ci/run); it installs what the tests need:
# redis-server, podman, chromium and kcat with apt-get when missing (deps), promtool taken
# out of Debian's prometheus package into bin/tools (promtool). The docs
# tests (cmd/neardup/docs_test.go: the docs' command lines against the real
# flags, runnable blocks run, figures from docs/performance.md) run in unit.

GO ?= go
BENCH_MODULES := bench/sketchbench bench/indexbench bench/scanbench

.PHONY: test deps vet staticcheck unit race bench bytes fuzz build eval deploy-test image promtool same-events

build:
	$(GO) build -o bin/neardup ./cmd/neardup

# Install the servers the integration tests start (redis-server for the
# index and pipeline tests, with redis-cli), podman (deploy/'s image build
# test), chromium (the compare --html page is checked in a headless
# browser: explain/ and cmd/neardup) and kcat (the docs' Kafka recipes are
# run as printed). Needs root or sudo when missing; skipped when present.
deps:
	@if ! command -v redis-server >/dev/null 2>&1; then \
		echo "installing redis-server (needed by the index tests)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server redis-tools >/dev/null; \
	fi
	@redis-server --version
	@if ! command -v podman >/dev/null 2>&1; then \
		echo "installing podman (needed by the deploy image test)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq podman >/dev/null; \
	fi
	@podman --version
	@if ! command -v chromium >/dev/null 2>&1; then \
		echo "installing chromium (needed by the compare --html browser tests)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi
	@chromium --version 2>/dev/null | tail -1
	@if ! command -v kcat >/dev/null 2>&1; then \
		echo "installing kcat (the docs' Kafka recipes are run by cmd/neardup's tests)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq kcat >/dev/null; \
	fi
	@kcat -V 2>/dev/null | head -1
	@if ! command -v luacheck >/dev/null 2>&1; then \
		echo "installing luacheck (Debian's lua-check: the index's Lua scripts)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq lua-check >/dev/null; \
	fi
	@luacheck --version | head -1
	@if ! command -v man >/dev/null 2>&1; then \
		echo "installing man-db (eval's manpages set renders the machine's manual pages)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq man-db >/dev/null; \
	fi
	@man --version | head -1

vet:
	$(GO) vet ./...
	@for m in $(BENCH_MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done
	cd deploy && $(DEPLOY_GO) vet ./...

# staticcheck (honnef.co/go/tools) over every module, and luacheck over
# the index's Lua scripts (index/lua/.luacheckrc); both print nothing
# when clean. Pinned: built from the Go module proxy with go install into
# bin/tools the first time (or when bin/tools has another version).
STATICCHECK_VERSION := v0.8.2
STATICCHECK = $(CURDIR)/bin/tools/staticcheck
staticcheck:
	@if ! $(STATICCHECK) -version 2>/dev/null | grep -qF "($(STATICCHECK_VERSION:v%=%))"; then \
		echo "installing staticcheck $(STATICCHECK_VERSION) into bin/tools"; \
		GOBIN=$(CURDIR)/bin/tools $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); \
	fi
	$(STATICCHECK) ./...
	@for m in $(BENCH_MODULES) deploy; do (cd $$m && $(STATICCHECK) ./...) || exit 1; done
	cd index/lua && luacheck --quiet --no-color .

# Tests that mostly wait (service/'s Kafka and Redis scenarios, index/'s
# node and cluster runs) call t.Parallel; -parallel 4 lets four of them
# wait at once on the 2-core machine (go test's default is GOMAXPROCS).
TESTPARALLEL ?= 4

unit:
	$(GO) test -count=1 -parallel $(TESTPARALLEL) ./...
	@for m in $(BENCH_MODULES); do (cd $$m && $(GO) test -count=1 ./...) || exit 1; done

# The race detector on the packages with concurrency of their own, and on
# the command (scan runs the whole pipeline, interrupts included). -short
# shrinks the tests whose size adds nothing under the race detector (more
# of the same serial work) and skips those of the command line's contract
# (messages, exit codes, the docs' outputs: contractTest in cmd/neardup);
# make unit runs them all at full size.
race:
	$(GO) test -count=1 -race -short -parallel $(TESTPARALLEL) ./verify/ ./pipeline/ ./consumer/ ./sink/ ./index/ ./service/ ./cmd/neardup/

# The deployment kit (deploy/, a module of its own): the image built with
# podman, the Kubernetes, compose, dashboard and alert files validated, and
# the metrics they read checked against a running neardup serve.
#
# CGO_ENABLED=0 for the whole module: its tests build the static neardup
# binary the image needs, and with the same setting that build reuses the
# packages compiled for the test binary (and vet's for both) instead of
# compiling the standard library, Kafka and Redis clients a second time.
# -vet=off: the vet target has already vetted the module with every check.
DEPLOY_GO = CGO_ENABLED=0 PATH="$(PROMTOOL_DIR):$$PATH" $(GO)
deploy-test: promtool
	cd deploy && $(DEPLOY_GO) test -vet=off -count=1 ./...

# promtool (Prometheus's config and rule checker, rule unit tests) for the
# deploy tests: taken out of Debian's prometheus package into bin/tools
# rather than installing the package, which would add a system user, the
# web console's JavaScript libraries and, where init scripts may run, start
# a Prometheus server. Skipped when a promtool is on PATH.
PROMTOOL_DIR := $(CURDIR)/bin/tools
promtool:
	@if ! PATH="$(PROMTOOL_DIR):$$PATH" command -v promtool >/dev/null 2>&1; then \
		echo "extracting promtool from Debian's prometheus package (needed by the deploy tests)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		tmp=$$(mktemp -d) && chmod 755 $$tmp && \
		{ (cd $$tmp && apt-get download -qq -o APT::Sandbox::User=root prometheus 2>/dev/null) || \
		  { $$SUDO apt-get update -qq && (cd $$tmp && apt-get download -qq -o APT::Sandbox::User=root prometheus); }; } && \
		mkdir -p $(PROMTOOL_DIR) && \
		dpkg-deb --fsys-tarfile $$tmp/prometheus_*.deb | tar -xO ./usr/bin/promtool > $(PROMTOOL_DIR)/promtool.new && \
		chmod 755 $(PROMTOOL_DIR)/promtool.new && mv $(PROMTOOL_DIR)/promtool.new $(PROMTOOL_DIR)/promtool; \
		rc=$$?; rm -rf $$tmp; exit $$rc; \
	fi
	@PATH="$(PROMTOOL_DIR):$$PATH" promtool --version 2>&1 | head -1

test: deps vet staticcheck unit race deploy-test

# The image without a registry: deploy/Containerfile.prebuilt (FROM scratch)
# around a static binary built here, stamped with git describe's version
# (VERSION=... to stamp another; empty: the build information Go records).
# -tags nodev, as in deploy/Containerfile: serve's binary, without demo,
# bench and eval (cmd/neardup/nodev.go).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null)
image:
	CGO_ENABLED=0 $(GO) build -trimpath -tags nodev $(if $(VERSION),-ldflags "-X main.version=$(VERSION)") -o bin/image/neardup ./cmd/neardup
	cp /etc/ssl/certs/ca-certificates.crt deploy/image/passwd deploy/image/group bin/image/
	podman build -f deploy/Containerfile.prebuilt -t localhost/neardup:$(or $(VERSION),devel) bin/image

# Events and dead letters byte for byte the same as BASE's (default main) on
# the real-text stream, the site sets and PAN13, memory and Redis index: for
# a change that should change no verdict (docs/design.md, "Layout").
same-events:
	.ci/same-events $(or $(BASE),main)

# Long runs, not part of CI: see README "Performance" and docs/performance.md
# (the Redis ceiling and 1M-document memory runs are in index/BENCHMARKS.md).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1s ./sketch/ ./verify/
	$(GO) test ./verify/ -count=1 -run LCSSpeedup -v
	cd bench/sketchbench && $(GO) run . -docs 1000
	cd bench/indexbench && $(GO) run . -docs 100000 -rounds 3
	$(GO) test -run '^$$' -bench Streams -benchtime 3x ./pipeline/
	cd bench/scanbench && $(GO) run . -docs 20000 -rounds 3
	cd bench/scanbench && $(GO) run . -docs 20000 -rounds 3 -profile books

# Bytes and CPU per stored document as the index grows: real text at 100k
# documents (a redis-server of its own), then the generated corpus at 1M
# (long: about 5 minutes for the memory index and 10 for Redis per
# profile); see docs/performance.md.
# REDIS points at a server of its own (its bytesbench:* keys are flushed).
REDIS ?= redis://127.0.0.1:6379
bytes:
	$(GO) run ./bench/bytesbench -corpus real -docs 100000 -index local-redis -at 20000,40000,60000,80000,100000
	$(GO) run ./bench/bytesbench -corpus generated -profile web -docs 1000000
	$(GO) run ./bench/bytesbench -corpus generated -profile web -docs 1000000 -index $(REDIS)
	$(GO) run ./bench/bytesbench -corpus generated -profile sentence -docs 1000000
	$(GO) run ./bench/bytesbench -corpus generated -profile sentence -docs 1000000 -index $(REDIS)
	$(GO) run ./bench/bytesbench -corpus generated -profile books -docs 100000
	$(GO) run ./bench/bytesbench -corpus generated -profile books -docs 100000 -index $(REDIS)

# The accuracy report on the labelled sets in ../shared/data and the
# synthetic sweep, written to docs/eval (README "Evaluation on labelled data").
eval:
	$(GO) run ./cmd/neardup eval --out docs/eval
	$(GO) run ./cmd/neardup eval synth --out docs/eval

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzTokenize -fuzztime 60s ./sketch/
	$(GO) test -run '^$$' -fuzz FuzzDecode$$ -fuzztime 60s ./sketch/
	$(GO) test -run '^$$' -fuzz FuzzDecodeJSON -fuzztime 60s ./stream/
	$(GO) test -run '^$$' -fuzz FuzzDecodeFast -fuzztime 60s ./stream/
	$(GO) test -run '^$$' -fuzz FuzzPipeline -fuzztime 120s ./pipeline/
