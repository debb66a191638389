# The two commands of a fresh clone: `make test` and `make demo`.
GO ?= go

.PHONY: test demo build bench lint

# test is exactly what CI runs (.ci/run calls it).
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...

build:
	$(GO) build -o bin/ ./cmd/...

# demo serves the embedded simulator, syncs it into ./data/demo.duckdb and prints a summary.
demo:
	$(GO) run ./cmd/syncer -demo -db data/demo.duckdb

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
