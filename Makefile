# Wagerail. `make run` starts everything on embedded defaults; `make test` runs the whole suite.
SHELL := /bin/bash
export GOTOOLCHAIN := local

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/wagerail/wagerail/internal/platform/buildinfo.Version=$(VERSION)
BIN := bin/wagerail
GO_TEST_TIMEOUT ?= 25m
FUZZTIME ?= 30s
WORKFLOWCHECK := go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: run test bench lint build build-prod generate migrate soak fuzz deps clean

## run: build and start the whole stack on embedded defaults (private Postgres, embedded Temporal + UI)
run: deps build
	./$(BIN) dev

## test: vet plus every test with the race detector, against real Postgres and embedded Temporal
# The race detector's pointer checks (checkptr) stay on for every package but the embedded
# Temporal server's SQLite, C translated to Go (modernc.org): checking its pointer arithmetic took a
# fifth of the api test binary's CPU (pprof) and says nothing about Wagerail's code.
# The test binaries link without DWARF (-ldflags=-w): the race detector's reports and panics'
# stacks come from the runtime's own symbol table, and linking the 57 race-instrumented binaries
# took 102 s with it against 78 s without (go test -c of every package, compiles cached, 2 cores).
# They build with -trimpath, so their compiles are cached by content, not by the checkout's
# directory: a fresh clone elsewhere compiles nothing the build cache holds. Compiling and linking
# every test binary in a new clone took 181 s (292 CPU-s) without it and 105 s (152 CPU-s) with it.
TEST_GCFLAGS := modernc.org/...=-d=checkptr=0
TEST_LDFLAGS := -w
TEST_FLAGS := -race -trimpath -gcflags='$(TEST_GCFLAGS)' -ldflags='$(TEST_LDFLAGS)'
test: deps
	go vet ./...
	go test $(TEST_FLAGS) -count=1 -timeout $(GO_TEST_TIMEOUT) ./...

## bench: print throughput and latency figures (nothing is asserted)
bench: deps
	set -o pipefail; WAGERAIL_BENCH=1 go test -run 'BenchmarkReport' -skip 'BenchmarkReportEwaWork' -v -count=1 -timeout 60m ./... \
	  | grep -v '^=== RUN\|no test files'
	set -o pipefail; WAGERAIL_BENCH=1 WAGERAIL_COUNT_STATEMENTS=1 go test -run 'BenchmarkReportEwaWork$$' -v -count=1 -timeout 20m ./api/ \
	  | grep -v '^=== RUN'

## soak: the long property/concurrency runs
soak: deps
	WAGERAIL_SOAK=1 go test $(TEST_FLAGS) -count=1 -timeout 90m ./...

## fuzz: run every fuzz target for FUZZTIME each
fuzz: deps
	@scripts/fuzz.sh $(FUZZTIME)

## lint: formatting, vet, staticcheck, a tidy go.mod and the Temporal workflow determinism check
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	go vet -tags noembed ./cmd/wagerail
	go run $(STATICCHECK) ./...
	@go mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	go run $(WORKFLOWCHECK) ./workflows/...

## build: the one binary, with the embedded Temporal server and UI that `wagerail dev` runs
build:
	go build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/wagerail

## build-prod: the binary as deploy/Dockerfile builds it (-tags noembed: no embedded Temporal
## server or UI; `wagerail dev` refuses), and both binaries' sizes
build-prod: build
	go build -tags noembed -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)-prod ./cmd/wagerail
	@ls -l $(BIN) $(BIN)-prod | awk '{printf "%-22s %6.1f MB\n", $$NF, $$5/1048576}'

## generate: regenerate protobuf/gRPC code (needs protoc; see schema/proto/*/v1/generate.go)
generate:
	go generate ./schema/...

## migrate: apply migrations to DATABASE_OWNER_URL
migrate: build
	./$(BIN) migrate up

deps:
	@scripts/ensure-deps.sh

clean:
	rm -rf bin
