# neardup build and test entry points. `make test` is the README's test
# command and what CI runs (.ci/run); it installs what the tests need.

GO ?= go
BENCH_MODULES := bench/sketchbench bench/indexbench bench/scanbench

.PHONY: test deps vet unit race bench fuzz build deploy-test image

build:
	$(GO) build -o bin/neardup ./cmd/neardup

# Install the servers the integration tests start (redis-server for the
# index and pipeline tests) and podman (deploy/'s image build test). Needs
# root or sudo when missing; skipped when present.
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

vet:
	$(GO) vet ./...
	@for m in $(BENCH_MODULES) deploy; do (cd $$m && $(GO) vet ./...) || exit 1; done

unit:
	$(GO) test -count=1 ./...

# The race detector on the packages with concurrency of their own, and on
# the command (scan runs the whole pipeline, interrupts included).
race:
	$(GO) test -count=1 -race -short ./verify/ ./pipeline/ ./consumer/ ./sink/ ./index/ ./service/ ./cmd/neardup/

# The deployment kit (deploy/, a module of its own): the image built with
# podman, the Kubernetes, compose, dashboard and alert files validated, and
# the metrics they read checked against a running neardup serve.
deploy-test:
	cd deploy && $(GO) test -count=1 ./...

test: deps vet unit race deploy-test

# The image without a registry: deploy/Containerfile.prebuilt (FROM scratch)
# around a static binary built here. VERSION=... to stamp another version.
VERSION ?= dev
image:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o bin/image/neardup ./cmd/neardup
	cp /etc/ssl/certs/ca-certificates.crt deploy/image/passwd deploy/image/group bin/image/
	podman build -f deploy/Containerfile.prebuilt -t localhost/neardup:$(VERSION) bin/image

# Long runs, not part of CI: see README "Performance" and docs/performance.md
# (the Redis ceiling and 1M-document memory runs are in index/BENCHMARKS.md).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1s ./sketch/ ./verify/
	$(GO) test ./verify/ -count=1 -run LCSSpeedup -v
	cd bench/sketchbench && $(GO) run . -docs 1000
	cd bench/indexbench && $(GO) run . -docs 100000 -rounds 3
	cd bench/scanbench && $(GO) run . -docs 20000
	cd bench/scanbench && $(GO) run . -docs 20000 -profile books

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzTokenize -fuzztime 60s ./sketch/
	$(GO) test -run '^$$' -fuzz FuzzDecode$$ -fuzztime 60s ./sketch/
	$(GO) test -run '^$$' -fuzz FuzzDecodeJSON -fuzztime 60s ./pipeline/
