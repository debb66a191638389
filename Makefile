# The two commands of a fresh clone: `make test` and `make demo`.
GO ?= go

.PHONY: test demo build bench lint

# test is exactly what CI runs (.ci/run calls it). The end-to-end packages run again with the
# simulator's lists in the other orders it offers (the spec leaves the order open; nothing may rely
# on it); the misbehaving-service tests do not depend on order and run once.
E2E = ./internal/fetch/ ./internal/jobs/ ./internal/report/ ./cmd/syncer/
test:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 -timeout 20m ./...
	BILLSYNC_TEST_LIST_ORDER=updated $(GO) test -count=1 -timeout 20m -skip 'TestMisbehavingService' $(E2E)
	BILLSYNC_TEST_LIST_ORDER=shuffle $(GO) test -count=1 -timeout 20m -skip 'TestMisbehavingService' $(E2E)

build:
	$(GO) build -o bin/ ./cmd/...

# demo serves the embedded simulator in-process, syncs it into ./data/demo.duckdb, prints what it
# stored and writes every report of the demo data to ./out.
demo:
	$(GO) run ./cmd/syncer -demo -db data/demo.duckdb -reports-out out

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
