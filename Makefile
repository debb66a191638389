# The two commands of a fresh clone: `make test` and `make demo`.
GO ?= go

.PHONY: test demo build bench

# test is exactly what CI runs (.ci/run calls it). It includes docs/docs_test.go, which runs
# every command of README.md and docs/*.md against a fresh demo warehouse.
test:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 -timeout 20m ./...

# build puts syncer, report and sandbox into bin/.
build:
	$(GO) build -o bin/ ./cmd/...

# demo builds bin/, replaces data/demo.duckdb: serves the embedded simulator in-process, syncs it as it was a day ago and as it is now,
# prints what it stored, writes every report of the demo data to out/ and ends with three
# next steps that work as printed.
demo: build
	rm -f data/demo.duckdb data/demo.duckdb.building
	bin/syncer -demo -db data/demo.duckdb -reports-out out

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
