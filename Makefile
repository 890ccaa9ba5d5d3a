GO        ?= go
# golangci-lint is a tool, not a dependency: installed with go install at a
# pinned version into ./bin (built with this module's Go toolchain).
GOLANGCI_VERSION ?= v2.15.0
GOLANGCI  := bin/golangci-lint-$(GOLANGCI_VERSION)
BIN       ?= bin/omega
# Dendrite is the Matrix homeserver the Matrix channel's tests run against:
# a tool like golangci-lint, built at a pinned version into ./bin. Without
# it those tests skip.
DENDRITE_VERSION ?= v0.13.8
DENDRITE  := bin/dendrite-$(DENDRITE_VERSION)
# stdjson: telego encodes Telegram's JSON with encoding/json instead of
# linking a second JSON library (grbit/go-json: 0.9 MB of executable, 2.5 MB
# of heap and 10 ms of init in every process; docs/BENCHMARKS.md, issue 12).
TAGS      ?= stdjson
FUZZTIME  ?= 10m
BENCHTIME ?= 2s
# Per-sender order across two processes is proved by repetition, not hoped.
ORDER_RUNS ?= 50
PKGS      := ./...

.PHONY: all build run test test-race bench fuzz lint clean dendrite

all: lint test build

# Without cgo, as the Dockerfile builds: omega needs no C library, and
# not mapping libc saves about 1 MiB of resident memory.
build:
	CGO_ENABLED=0 $(GO) build -tags $(TAGS) -o $(BIN) ./cmd/omega

# Runs the gateway on the embedded default (SQLite under OMEGA_DATA_DIR,
# ~/.omega unless set). Ctrl-C stops it.
run: build
	./$(BIN) serve

# Unit, conformance and integration tests. PostgreSQL tests run when a
# server answers at OMEGA_TEST_DATABASE_URL (default
# postgres://postgres@127.0.0.1:5432/test) and are skipped otherwise,
# unless OMEGA_TEST_REQUIRE_POSTGRES=1 (as in CI). The Matrix tests run
# against bin/dendrite-$(DENDRITE_VERSION) (make dendrite) and skip
# without it, unless OMEGA_TEST_REQUIRE_MATRIX=1 (as in CI). The marker fuzzer runs
# for a few seconds on every test run.
test:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || \
		echo "make test: no Chromium found, so the browser tests of ./api/webui and ./cmd/omega are skipped (apt-get install -y chromium; OMEGA_TEST_REQUIRE_BROWSER=1 makes them fail instead)"
	$(GO) test -count=1 -timeout 20m $(PKGS)
	$(GO) test -count=1 -run '^$$' -fuzz FuzzParse -fuzztime 5s ./domain/markers
	$(GO) test -count=$(ORDER_RUNS) -timeout 20m -run '^TestTwoProcessesOnPostgres$$' ./app/

test-race:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 60m ./eventstore/... ./projections/... ./handlers/pipeline/... ./api/webui/...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./domain/markers
	$(GO) test -run '^$$' -fuzz FuzzTelegramUpdate -fuzztime $(FUZZTIME) ./channels/telegram
	$(GO) test -run '^$$' -fuzz FuzzAPIMessagesSQLite -fuzztime $(FUZZTIME) ./app
	$(GO) test -run '^$$' -fuzz FuzzAPIMessagesPostgres -fuzztime $(FUZZTIME) ./app

# gofmt, vet, staticcheck, errcheck, a complexity limit... see .golangci.yml.
lint: $(GOLANGCI)
	$(GOLANGCI) run $(PKGS)

$(GOLANGCI):
	@mkdir -p bin
	GOBIN=$(CURDIR)/bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	mv bin/golangci-lint $@

dendrite: $(DENDRITE)

$(DENDRITE):
	@mkdir -p bin/.dendrite
	GOFLAGS= GOBIN=$(CURDIR)/bin/.dendrite $(GO) install github.com/matrix-org/dendrite/cmd/dendrite@$(DENDRITE_VERSION)
	mv bin/.dendrite/dendrite $@

clean:
	rm -rf bin
