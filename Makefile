# neardup build and test entry points. `make test` is the README's test
# command and what CI runs (.ci/run); it installs what the tests need.

GO ?= go
BENCH_MODULES := bench/sketchbench bench/indexbench bench/scanbench

.PHONY: test deps vet unit race bench bytes fuzz build eval

build:
	$(GO) build -o bin/neardup ./cmd/neardup

# Install the servers the integration tests start (redis-server for the
# index and pipeline tests). Needs root or sudo when missing; skipped when
# present.
deps:
	@if ! command -v redis-server >/dev/null 2>&1; then \
		echo "installing redis-server (needed by the index tests)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server redis-tools >/dev/null; \
	fi
	@redis-server --version

vet:
	$(GO) vet ./...
	@for m in $(BENCH_MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done

unit:
	$(GO) test -count=1 ./...
	@for m in $(BENCH_MODULES); do (cd $$m && $(GO) test -count=1 ./...) || exit 1; done

# The race detector on the packages with concurrency of their own, and on
# the command (scan runs the whole pipeline, interrupts included).
race:
	$(GO) test -count=1 -race -short ./verify/ ./pipeline/ ./consumer/ ./sink/ ./index/ ./service/ ./cmd/neardup/

test: deps vet unit race

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

# Bytes per stored document at 1M documents (long: about 5 minutes for the
# memory index and 10 for Redis per profile); see docs/performance.md.
# REDIS points at a server of its own (its bytesbench:* keys are flushed).
REDIS ?= redis://127.0.0.1:6379
bytes:
	$(GO) run ./bench/bytesbench -profile web -docs 1000000
	$(GO) run ./bench/bytesbench -profile web -docs 1000000 -index $(REDIS)
	$(GO) run ./bench/bytesbench -profile sentence -docs 1000000
	$(GO) run ./bench/bytesbench -profile sentence -docs 1000000 -index $(REDIS)
	$(GO) run ./bench/bytesbench -profile books -docs 100000
	$(GO) run ./bench/bytesbench -profile books -docs 100000 -index $(REDIS)

# The accuracy report on the labelled sets in ../shared/data and the
# synthetic sweep, written to docs/eval (README "Evaluation on labelled data").
eval:
	$(GO) run ./cmd/neardup eval
	$(GO) run ./cmd/neardup eval synth

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzTokenize -fuzztime 60s ./sketch/
	$(GO) test -run '^$$' -fuzz FuzzDecode$$ -fuzztime 60s ./sketch/
	$(GO) test -run '^$$' -fuzz FuzzDecodeJSON -fuzztime 60s ./pipeline/
	$(GO) test -run '^$$' -fuzz FuzzPipeline -fuzztime 120s ./pipeline/
