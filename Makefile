# State Secrets server. `make run` serves the game on 127.0.0.1:8080 (ADDR=host:port to move it); `make test` is what CI runs.
GO      ?= go
BIN     := bin
SHARED  ?= ../shared
# staticcheck, like templ, is a tool of go.mod's (go get -tool): built once
# into the build cache and versioned with the module.
STATICCHECK := $(GO) tool staticcheck

.PHONY: all build run test lint monitoring generate bench fuzz loadtest loadtest-workers capacity simulate bench-nginx bench-idle bench-streams clean

all: build

# -buildvcs=auto: stamp the VCS revision that -version prints whenever the
# tree is a checkout, whatever GOFLAGS says (a tarball builds without it).
build:
	$(GO) build -buildvcs=auto -o $(BIN)/ ./cmd/...

# run: the game on ADDR, loopback by default (ADDR=:8080 for every interface).
ADDR ?= 127.0.0.1:8080
# CPU: where make loadtest's and make capacity's servers and load generator
# run (scripts/pin.sh): empty, the default, the servers on CPU 0 and the load
# generator on the other cores (taskset; no pinning on 1 core); off, no
# pinning; S, the servers on CPU list S and the load generator on the rest;
# S:C, the servers on S and the load generator on C.
CPU ?=
# PORT_BASE: the first of the loopback ports make loadtest, make capacity and
# make test's nginx use, N and up (each says which); empty, the default:
# free ports the kernel picks.
PORT_BASE ?=
run: build
	$(BIN)/gameserver -addr $(ADDR) -db ./data/statesecrets.db

# AXE is axe-core, the accessibility checker the browser tests inject into
# Chromium, from npm at the version internal/browsertest/package-lock.json
# pins (npm writes the hidden lockfile it is named by once it installed).
AXE := internal/browsertest/node_modules/.package-lock.json
$(AXE): internal/browsertest/package.json internal/browsertest/package-lock.json
	npm ci --prefix internal/browsertest --no-audit --no-fund --loglevel=error

# test: the lint checks, then every test with the race detector. Test artifacts
# (the browser test's screenshot) are kept under $(TESTOUT)/_artifacts. The
# handlers' tests send their requests through the loop on loopback, then once
# more through net/http (gameserver.Serial): the game works on both engines
# (STATESECRETS_TEST_ENGINE, handlers/engine_test.go). The engine's tests,
# its back-end conformance suite among them, run once more on the portable
# back end (the build tag gameserver_portable; gameserver/backend.go).
# Every test server listens on 127.0.0.1:0 (a free port the kernel picks),
# but nginx in cmd/gameserver's proxy tests, which cannot: it gets free
# ports found the same way, or PORT_BASE=N for N and up (two per test).
# The timeout is per package: cmd/gameserver's tests took 15 minutes beside
# three busy loops on 2 cores (4 on a quiet machine).
TESTOUT ?= testoutput
test: lint monitoring $(AXE)
	mkdir -p $(TESTOUT)
	STATESECRETS_TEST_ENGINE=loop STATESECRETS_TEST_PORT_BASE=$(PORT_BASE) $(GO) test -race -count=1 -timeout 45m -artifacts -outputdir $(abspath $(TESTOUT)) ./...
	STATESECRETS_TEST_ENGINE=nethttp $(GO) test -race -count=1 -timeout 10m ./handlers
	$(GO) test -race -count=1 -timeout 10m -tags gameserver_portable ./gameserver

# lint: gofmt, the templ pages' generated Go code up to date with the .templ
# files (`make generate` rewrites it), go vet and staticcheck (go.mod's
# version; the first run builds it, a minute or more on 2 cores).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	@$(GO) tool templ generate -check -path assets/templates -log-level warn || \
	  { echo "the generated *_templ.go files are stale: run make generate and commit them"; exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...

# monitoring: the Prometheus files deploy/ ships: the scrape config and
# the alert rules checked, the alerts' unit tests run (promtool, from
# Debian's prometheus package). The dashboard's and the alerts' queries are
# checked against a live server's metrics by cmd/gameserver's
# TestDashboardQueries.
PROMTOOL ?= promtool
monitoring:
	cd deploy/prometheus && $(PROMTOOL) check config prometheus.yml >/dev/null && \
	  $(PROMTOOL) check rules statesecrets-alerts.yml && \
	  $(PROMTOOL) test rules statesecrets-alerts.test.yml

# generate: compile the templ pages (assets/templates/*.templ) to Go; templ
# runs through go.mod's tool directive, so nothing needs installing.
generate:
	$(GO) tool templ generate -path assets/templates -log-level warn

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# fuzz: every fuzz target in turn, FUZZTIME each (default 30s; the first
# seconds go to building and replaying the corpus, so under ~20s little new
# input is tried).
FUZZTIME ?= 30s
FUZZ_TARGETS := gameserver:FuzzParseRequest loadtest:FuzzResponse loadtest:FuzzParseThreshold loadtest:FuzzReadEnvelope \
	loadtest:FuzzStreamParser game:FuzzResolve \
	handlers:FuzzAction handlers:FuzzAcceptEncoding
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "== $${t#*:} (./$${t%%:*}, $(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) ./$${t%%:*}; \
	done

# loadtest: the lessons of a single-threaded server, each mistake beside its
# fix, in under three minutes: a world of 1,500 players served at once by
# the loop, the loop with a teaching switch (-no-read-cache, -hash-on-loop)
# and the same on -engine nethttp; the gap, head-of-line blocking and a
# login storm, each before and after, over three interleaved repeats with
# medians and ranges, server CPU per request first; a concurrency sweep.
# Free loopback ports, or PORT_BASE=N for N and up (metrics on N+20 and
# up). HTML reports and JSON go to bin/loadtest-report/ (scripts/loadtest.sh;
# loadtest/README.md). Fails if any request fails.
loadtest:
	GO=$(GO) BIN=$(BIN) LOADTEST_PORT_BASE=$(PORT_BASE) LOADTEST_CPU=$(CPU) scripts/loadtest.sh

# loadtest-workers: the same with -workers 1 and then -workers 2 (the load
# generator shares the machine's cores with the workers).
loadtest-workers:
	@set -e; for n in 1 2; do echo "##### gameserver -workers $$n"; \
	  LOADTEST_WORKERS=$$n GO=$(GO) BIN=$(BIN) scripts/loadtest.sh; done

# capacity: how many players one server holds (docs/capacity.md): virtual
# players (game/bots, bin/players) ramped against a fresh server with a 10 s
# tick until a service level breaks (page p99 <= 50 ms, order p99 <= 100 ms,
# event delivery p99 <= 1 s, no errors), on -engine nethttp at GOMAXPROCS=1
# and then on the loop; the last line is the loop's "capacity: N players
# (engine loop, ...)". HTML reports with the ramp's charts in bin/capacity/.
# The server runs on CPU 0 and the players on the other cores (CPU= above);
# each engine's report says what N counts, and its capacity line who reached
# its limit first (the server, the load generator or the machine).
# A few minutes on 2 cores; loopback only (scripts/capacity.sh). Free
# loopback ports, or PORT_BASE=N: the server on N, its metrics on N+1 (one
# server at a time).
capacity:
	GO=$(GO) BIN=$(BIN) CAPACITY_PORT_BASE=$(PORT_BASE) CAPACITY_CPU=$(CPU) scripts/capacity.sh

# simulate: the balance tables: ROUNDS seeded rounds (default 300) of scripted
# strategies at each table size of 2, 3, 4, 6, 10 and 20 players on the real
# rules (game/sim), the best response a search of a family of strategies
# finds against them (SEARCH rounds a candidate, default 60; 0: none), with
# the balance targets each size misses. JSON=1 prints them as JSON
# (cmd/simulate -json). Some minutes on 2 cores.
ROUNDS ?= 300
SEARCH ?= 60
simulate:
	$(GO) run ./cmd/simulate -rounds $(ROUNDS) -search $(SEARCH) $(if $(JSON),-json)

# bench-nginx: the file server (cmd/fileserver) against nginx with one worker,
# serving $(SHARED)/bench/www over loopback (see $(SHARED)/bench/README.md).
bench-nginx:
	$(GO) build -o $(BIN)/fileserver ./cmd/fileserver
	cmd/fileserver/bench.sh $(BIN)/fileserver $(SHARED) nginx

# bench-idle: resident memory per idle keep-alive connection, 10,000 of them.
bench-idle:
	$(GO) build -o $(BIN)/fileserver ./cmd/fileserver
	cmd/fileserver/bench.sh $(BIN)/fileserver $(SHARED) idle

# bench-streams: 10,000 open event streams on cmd/fileserver: resident memory
# per stream, and the time one broadcast takes to reach them all.
bench-streams:
	$(GO) build -o $(BIN)/fileserver ./cmd/fileserver
	cmd/fileserver/bench.sh $(BIN)/fileserver $(SHARED) streams

clean:
	rm -rf $(BIN)
