# The two commands of a fresh clone: `make test` and `make demo`.
GO ?= go

.PHONY: test check demo build bench

# test is exactly what CI runs (.ci/run calls it). It includes docs/docs_test.go, which runs
# every command of README.md and docs/*.md against a fresh demo warehouse.
# The end-to-end packages run again with the simulator's lists in the other orders it offers (the
# spec leaves the order open; nothing may rely on it), but for the tests REORDER_SKIP names, whose
# checks no list order can change (docs/development.md says why for each; docs/check_test.go keeps
# that table and this list equal), and the subtests of TestExactlyOnceUnderEveryVariant that set the
# simulator's list order themselves (the first run already ran each in every order: again they would
# repeat the same runs, about 4/5 of that test's time). Every benchmark then runs once, so one that
# no longer runs fails here rather than when someone measures (a migration once broke the reports benchmark's warehouse unnoticed);
# with -short, each on a hundredth of its data (the figures come from make bench), and only in the
# packages declaring one (BENCH_PKGS, found when the recipe runs): go test links and starts every
# other package's test binary for nothing, most of them with DuckDB linked in.
REORDER_SKIP = TestMisbehavingService \
	TestRenderedAsPrinted \
	TestCSVDialectsImportAsNumbers \
	TestJobFilesPrinted \
	TestDaemonDeliveriesNeverFailTheSync \
	TestLakeBehindAsAnOperatorSeesIt
E2E = ./internal/fetch/ ./internal/syncrun/ ./internal/jobs/ ./internal/report/ ./cmd/syncer/
empty :=
space := $(empty) $(empty)
# -skip: the names above whole, or the exactly-once matrix's cases with a list order of their own.
REORDER_SKIP_RE = ^($(subst $(space),|,$(strip $(REORDER_SKIP))))$$|TestExactlyOnceUnderEveryVariant/[^/]+/lists_
BENCH_PKGS = $(sort $(dir $(shell grep -rl --include='*_test.go' '^func Benchmark' .)))
test:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 -timeout 20m ./...
	BILLSYNC_TEST_LIST_ORDER=updated $(GO) test -count=1 -timeout 20m -skip '$(REORDER_SKIP_RE)' $(E2E)
	BILLSYNC_TEST_LIST_ORDER=shuffle $(GO) test -count=1 -timeout 20m -skip '$(REORDER_SKIP_RE)' $(E2E)
	$(GO) test -count=1 -timeout 20m -short -run '^$$' -bench . -benchtime 1x $(BENCH_PKGS)

# check is the quick loop between edits: vet, staticcheck and every test but the end-to-end ones
# CHECK_SKIP names (real syncs at scale, LibreOffice, the docs test, ...). docs/development.md lists
# each with why; docs/check_test.go fails when the list, that table and the tests that exist differ.
# -short skips the few parts of fast tests that build or run for minutes. make test runs everything.
# -timeout as make test's: go test's default of 10 minutes a package ended cmd/syncer and
# internal/delivery mid-test on this machine at a load of 35, where wall time is ~15x CPU time.
CHECK_SKIP = TestDocCommands \
	TestDaemonDeliveriesNeverFailTheSync \
	TestFourEyesAsPeopleRunIt \
	TestRenderedAsPrinted \
	TestCSVDialectsImportAsNumbers \
	TestJobFilesPrinted \
	TestHostileWorkbooksReadInBoundedMemory \
	TestServiceClockIdentityTiming \
	TestExactlyOnceUnderEveryVariant \
	TestCreditReadsWaitForAReason \
	TestMisbehavingService \
	TestCreditBudgetReadsInReasonOrder \
	TestCreditOwedLeftIsSaid \
	TestCreditTargetsLevel \
	TestCreditTargetsBoundsHold \
	TestFleetCommitsConcurrently \
	TestLakeBehindAsAnOperatorSeesIt
check:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 -timeout 20m -short -skip '^($(subst $(space),|,$(strip $(CHECK_SKIP))))$$' ./...

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
