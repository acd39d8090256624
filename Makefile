# m3eval build, test and demo targets. go-sqlite3 needs cgo.
export CGO_ENABLED := 1

BIN      := bin/m3eval
DEMO_DB  := m3eval-demo.db
GO_FILES := $(shell find . -name '*.go' -not -path './bin/*')

.PHONY: build test test-short bench lint docs demo clean tidy

build: $(BIN)

$(BIN): $(GO_FILES) go.mod go.sum $(shell find annotations -type f 2>/dev/null)
	go build -buildvcs=auto -o $(BIN) ./cmd/m3eval

# test runs every test with the race detector, including the end-to-end tests that drive
# the built binary in tmux (they build their own copy of the binary). When PostgreSQL is
# installed (initdb on PATH or in /usr/lib/postgresql/*/bin), scripts/with-postgres starts a
# temporary server for the run: the tests that compare the backends (and the e2e saving
# tests) use it beside SQLite, and then the store's conformance suite (CONFORMANCE: the store's
# tests and those of the engines and screens that open a store) runs again with every store
# on PostgreSQL (M3EVAL_TEST_BACKEND=postgres). Without PostgreSQL they run on SQLite only
# and one line says so. M3EVAL_TEST_POSTGRES=postgres://… uses an existing server instead.
CONFORMANCE := ./internal/store/... ./internal/importer/ ./internal/workflow/ ./internal/scoring/ ./internal/report/ ./tui/
test:
	go vet ./...
	scripts/with-postgres --if-available sh -c 'go test -race -count=1 -timeout 30m ./... && \
	  if [ -n "$$M3EVAL_TEST_POSTGRES" ]; then \
	    echo "conformance suite on PostgreSQL:"; \
	    M3EVAL_TEST_BACKEND=postgres go test -race -count=1 -timeout 30m $(CONFORMANCE); \
	  fi'

# test-short is the quick loop: every package's tests without the race detector; -short skips
# the end-to-end tests (e2e/: tmux, SSH, Chromium) and the tests that build the binary.
test-short:
	go test -short ./...

bench:
	scripts/with-postgres --if-available go test -run '^$$' -bench . -benchmem -benchtime 1x -count 1 -timeout 60m ./... | tee bench.txt

# staticcheck is pinned and run from the Go module proxy: nothing to install beforehand.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# lint: gofmt, go vet, staticcheck, and go.mod/go.sum as `go mod tidy` would leave them
# (checked with -diff, which changes nothing).
lint:
	@out=$$(gofmt -l $(GO_FILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go vet ./...
	go run $(STATICCHECK) ./...
	@go mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'make tidy' (the diff above is what it changes)"; exit 1; }

# docs regenerates the CLI reference in docs/cli from the commands' help
# (TestDocsUpToDate fails while it is stale).
docs:
	go run ./cmd/m3eval gen-docs docs/cli

# demo imports the embedded demo data into a fresh database and opens the annotator on it.
demo: $(BIN)
	rm -f $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
	$(BIN) --db $(DEMO_DB) import --demo
	$(BIN) --db $(DEMO_DB) annotate --annotator demo

tidy:
	go mod tidy

clean:
	rm -rf bin $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm bench.txt
