GO        ?= go
BIN       ?= bin/omega
FUZZTIME  ?= 10m
BENCHTIME ?= 2s
PKGS      := ./...

.PHONY: all build run test test-race bench fuzz lint clean

all: lint test build

build:
	$(GO) build -o $(BIN) ./cmd/omega

# Runs the gateway on the embedded default (SQLite under OMEGA_DATA_DIR,
# ~/.omega unless set). Ctrl-C stops it.
run: build
	./$(BIN) serve

# Unit, conformance and integration tests. PostgreSQL tests run when a
# server answers at OMEGA_TEST_DATABASE_URL (default
# postgres://postgres@127.0.0.1:5432/test) and are skipped otherwise,
# unless OMEGA_TEST_REQUIRE_POSTGRES=1 (as in CI). The marker fuzzer runs
# for a few seconds on every test run.
test:
	$(GO) test -count=1 -timeout 20m $(PKGS)
	$(GO) test -count=1 -run '^$$' -fuzz FuzzParse -fuzztime 5s ./domain/markers

test-race:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 60m ./eventstore/... ./projections/... ./handlers/...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./domain/markers

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

clean:
	rm -rf bin
