# The two commands of a fresh clone: `make test` and `make demo`.
GO ?= go

.PHONY: test demo build bench lint

# test is exactly what CI runs (.ci/run calls it).
test:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 -timeout 20m ./...

build:
	$(GO) build -o bin/ ./cmd/...

# demo serves the embedded simulator in-process, syncs it into ./data/demo.duckdb, prints what it
# stored and writes every report of the demo data to ./out.
demo:
	$(GO) run ./cmd/syncer -demo -db data/demo.duckdb -reports-out out

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
