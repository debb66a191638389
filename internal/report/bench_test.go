package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
	"github.com/xuri/excelize/v2"
)

// synthSQL fills a fresh warehouse with about 1M records shaped like a large
// merchant's: a year of invoices, payment requests, open transactions,
// reviews, credit movements and webhook deliveries, with their change history.
var synthSQL = []string{
	`INSERT INTO sync_runs (id, account, status, started_at, finished_at, records, requests, retries, error) VALUES (1, 'bench', 'succeeded', TIMESTAMPTZ '2026-06-30 16:30:00+00', TIMESTAMPTZ '2026-06-30 17:00:00+00', 1000000, 20000, 0, NULL)`, // by name: later migrations add columns
	`INSERT INTO customers BY NAME SELECT 'bench' AS account, 'cus-' || i AS id,
		CASE WHEN i % 500 = 0 THEN 'dup@mail.example' ELSE 'c' || i || '@mail.example' END AS email,
		'62812' || i AS mobile, 'Customer ' || i AS name, 'active' AS status,
		TIMESTAMPTZ '2025-01-01 00:00:00+00' + to_seconds(i * 300) AS created_at,
		1 AS first_seen_run, 1 AS last_seen_run, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS first_seen_at, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS last_seen_at
		FROM range(50000) t(i)`,
	`INSERT INTO products BY NAME SELECT 'bench' AS account, 'prod-' || i AS id, 'Product ' || i AS name,
		CASE WHEN i % 10 = 0 THEN 'saas' ELSE 'course' END AS type, 'active' AS status, 100000 + i * 1000 AS amount
		FROM range(2000) t(i)`,
	`INSERT INTO invoices BY NAME SELECT 'bench' AS account, 'inv-' || i AS id, 10000 + (i * 7919) % 5000000 AS amount,
		TIMESTAMPTZ '2025-07-01 00:00:00+00' + to_seconds(i * 200) AS created_at, 'invoice' AS type,
		CASE WHEN i % 10 < 6 THEN 'paid' WHEN i % 10 < 8 THEN 'closed' ELSE 'active' END AS status,
		'Invoice ' || i AS name, 'cus-' || (i % 50000) AS customer_id, 'c' || (i % 50000) || '@mail.example' AS customer_email,
		'Customer ' || (i % 50000) AS customer_name, 1 AS first_seen_run, 1 AS last_seen_run,
		TIMESTAMPTZ '2026-06-30 17:00:00+00' AS first_seen_at, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS last_seen_at
		FROM range(150000) t(i)`,
	`INSERT INTO payment_requests BY NAME SELECT 'bench' AS account, 'pr-' || i AS id, 5000 + (i * 104729) % 2000000 AS amount,
		TIMESTAMPTZ '2025-07-01 00:00:00+00' + to_seconds(i * 300) AS created_at, 'payment_request' AS type,
		CASE WHEN i % 10 < 5 THEN 'paid' WHEN i % 10 < 8 THEN 'closed' ELSE 'unpaid' END AS status,
		'Request ' || i AS name, 1 AS first_seen_run, 1 AS last_seen_run,
		TIMESTAMPTZ '2026-06-30 17:00:00+00' AS first_seen_at, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS last_seen_at
		FROM range(100000) t(i)`,
	`INSERT INTO unpaid_transactions BY NAME SELECT 'bench' AS account, 'tx-' || i AS id,
		TIMESTAMPTZ '2025-07-01 00:00:00+00' + to_seconds(i * 300) AS created_at,
		CASE WHEN i % 2 = 0 THEN 'invoice' ELSE 'payment_request' END AS type, 10000 + (i * 7919) % 5000000 AS amount, 'active' AS status,
		CASE WHEN i % 2 = 0 THEN 'inv-' || i ELSE 'pr-' || i END AS payment_link_id,
		'cus-' || (i % 50000) AS customer_id, 'c' || (i % 50000) || '@mail.example' AS customer_email, 'Customer ' || (i % 50000) AS customer_name,
		'Item ' || i AS payment_link_name, 'https://pay.example/plt/tx-' || i AS payment_url,
		1 AS first_seen_run, 1 AS last_seen_run, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS first_seen_at, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS last_seen_at,
		CASE WHEN i % 3 = 0 THEN TIMESTAMPTZ '2026-06-30 17:00:00+00' END AS deleted_upstream_at
		FROM range(100000) t(i)`,
	`INSERT INTO reviews BY NAME SELECT 'bench' AS account, 'rev-' || i AS id,
		TIMESTAMPTZ '2025-07-01 00:00:00+00' + to_seconds(i * 300) AS created_at, 'cus-' || (i % 50000) AS customer_id,
		'Customer ' || (i % 50000) AS customer_name, 'Bagus' AS message, 'prod-' || (i % 2000) AS payment_link_id,
		'Product ' || (i % 2000) AS product_name, 'course' AS product_type, 1 + (i * 7) % 5 AS rating, 'ACTIVE' AS status,
		1 AS first_seen_run, 1 AS last_seen_run, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS first_seen_at, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS last_seen_at
		FROM range(100000) t(i)`,
	`INSERT INTO credit_ledger BY NAME SELECT 'bench' AS account, 'led-' || i AS id, 'cus-' || (i % 20000) AS customer_id,
		'prod-' || ((i % 20000) % 200 * 10) AS product_id, TIMESTAMPTZ '2025-07-01 00:00:00+00' + to_seconds(i * 150) AS created_at,
		CASE WHEN i % 4 = 0 THEN 1000 ELSE 0 END AS credit, CASE WHEN i % 4 = 0 THEN 0 ELSE 100 END AS debit,
		'ACTIVE' AS status, 'ADD_ON' AS wallet_type,
		CASE WHEN i % 4 <> 0 THEN 'CREDIT_USAGE' WHEN i % 8 = 0 THEN 'TOPUP' ELSE 'MERCHANT_TOPUP' END AS type,
		1 AS first_seen_run, 1 AS last_seen_run, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS first_seen_at, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS last_seen_at
		FROM range(200000) t(i)`,
	`INSERT INTO credit_fetch_state (account, customer_id, last_fetched_at, run_id, reason) SELECT 'bench', 'cus-' || i, TIMESTAMPTZ '2026-06-30 17:00:00+00', 1, 'never' FROM range(20000) t(i)`,
	`INSERT INTO webhook_deliveries BY NAME SELECT 'bench' AS account, 'wh-' || i AS id,
		TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i * 100) AS created_at,
		CASE WHEN i % 3 = 0 THEN 'payment.received' ELSE 'payment.reminder' END AS event_type,
		CASE WHEN i % 20 = 0 THEN 'FAILED' ELSE 'SUCCESS' END AS status, 'https://hooks.example/' || (i % 3) AS url_destination,
		1 AS first_seen_run, 1 AS last_seen_run, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS first_seen_at, TIMESTAMPTZ '2026-06-30 17:00:00+00' AS last_seen_at
		FROM range(150000) t(i)`,
	`INSERT INTO record_changes SELECT 'bench', 'unpaid_transactions', 'tx-' || i, '_created', NULL, NULL, TIMESTAMPTZ '2026-05-31 17:00:00+00', 1 FROM range(100000) t(i)`,
	`INSERT INTO record_changes SELECT 'bench', 'unpaid_transactions', 'tx-' || i, '_deleted', NULL, NULL, TIMESTAMPTZ '2026-06-30 17:00:00+00', 1 FROM range(0, 100000, 3) t(i)`,
	`INSERT INTO record_changes SELECT 'bench', 'invoices', 'inv-' || i, 'status', 'active', 'paid', TIMESTAMPTZ '2025-07-01 00:00:00+00' + to_seconds(i * 200 + 86400 * (i % 20)), 1 FROM range(0, 150000, 2) t(i)`,
	// Conflicting duplicates as the syncer records them (warehouse.recordConflicts): an invoice
	// read twice in the run with another status, and a few whose earlier version was not kept.
	`INSERT INTO data_quality_conflicts SELECT 'bench', 'invoices', 'invoices', 'inv-' || i, 1, TIMESTAMPTZ '2026-06-30 17:00:00+00',
		'/hl/v1/invoice', 1 + i // 100, i % 100,
		CASE WHEN i % 10 <> 0 THEN json_object('id', 'inv-' || i, 'status', 'active', 'amount', 10000 + i, 'name', 'Invoice ' || i) END,
		2 + i // 100, i % 100, json_object('id', 'inv-' || i, 'status', 'paid', 'amount', 10000 + i, 'name', 'Invoice ' || i)
		FROM range(0, 150000, 500) t(i)`,
	// Records the syncer flagged (warehouse data_quality_flags): credit entries a service clock
	// ahead dated after this machine's, and a few customers' names that echoed the key.
	`INSERT INTO data_quality_flags (account, run_id, observed_at, entity, record_id, flag, field, detail, path, page, item)
		SELECT 'bench', 1, TIMESTAMPTZ '2026-06-30 17:00:00+00', 'credit_ledger', 'led-' || i, 'service_clock', 'createdAt',
		'dated 2026-07-02 00:00 UTC, after this machine''s clock by 31h', NULL, NULL, NULL FROM range(0, 200000, 100) t(i)`,
	`INSERT INTO data_quality_flags (account, run_id, observed_at, entity, record_id, flag, field, detail, path, page, item)
		SELECT 'bench', 1, TIMESTAMPTZ '2026-06-30 17:00:00+00', 'customers', 'cus-' || i, 'api_key_redacted', 'name',
		'the API key (or 8 or more of its characters) replaced by [redacted]', '/hl/v1/customer', 1 + i // 100, i % 100
		FROM range(0, 20000, 1000) t(i)`,
}

// benchWarehouse builds the synthetic warehouse once per benchmark binary;
// BILLSYNC_REPORT_BENCH_DB names an existing one to reuse between runs.
func benchWarehouse(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		if p := os.Getenv("BILLSYNC_REPORT_BENCH_DB"); p != "" {
			if _, err := os.Stat(p); err == nil {
				benchDB = p
				return
			}
			benchDB, benchErr = p, buildBenchWarehouse(p)
			return
		}
		dir, err := os.MkdirTemp("", "report-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchDir = dir
		benchDB = filepath.Join(dir, "bench.duckdb")
		benchErr = buildBenchWarehouse(benchDB)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDB
}

var (
	benchOnce         sync.Once
	benchDB, benchDir string
	benchErr          error
)

func buildBenchWarehouse(path string) error {
	ctx := context.Background()
	build, err := warehouse.StartBuild(ctx, path, warehouse.BuildOptions{Log: quiet})
	if err != nil {
		return err
	}
	for _, q := range synthSQL {
		if testing.Short() {
			q = sampleSynth(q)
		}
		if _, err := build.DB().ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%.60s: %w", q, err)
		}
	}
	// as a sync run publishes it: with the report macros
	if err := queries.Install(ctx, build.DB()); err != nil {
		return err
	}
	return build.Publish(ctx)
}

// synthRange is a generated series of synthSQL, with its upper bound.
var synthRange = regexp.MustCompile(`FROM range\((?:0, )?(\d+)(?:, \d+)?\) t\(i\)`)

// sampleSynth keeps about one record in a hundred of one of synthSQL's statements (about 10k in
// all), for -short: make test runs every benchmark once with -short to prove each still runs, and
// building the 1M records is most of that. It keeps i % 1000 < 10 of each series over 10,000 long,
// so every residue modulo 10 (the statuses and kinds) is there and the records kept refer to
// records kept (customer and link ids are i modulo multiples of 1000); the 2,000 products stay
// whole. Every query still reads rows. The figures come from make bench.
func sampleSynth(q string) string {
	return synthRange.ReplaceAllStringFunc(q, func(m string) string {
		if n, _ := strconv.Atoi(synthRange.FindStringSubmatch(m)[1]); n <= 10_000 {
			return m
		}
		return m + " WHERE i % 1000 < 10"
	})
}

// benchAsOf is the report date of every benchmark run: the day of the synthetic sync.
var benchAsOf = time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)

// childAsOf is a child's report date: BILLSYNC_REPORT_CHILD_ASOF (YYYY-MM-DD), for a child run by
// hand over another warehouse (one a sync wrote, whose records are of its own days), else benchAsOf.
func childAsOf() (time.Time, error) {
	v := os.Getenv("BILLSYNC_REPORT_CHILD_ASOF")
	if v == "" {
		return benchAsOf, nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return t, fmt.Errorf("BILLSYNC_REPORT_CHILD_ASOF: %w", err)
	}
	return t, nil
}

// runChild runs one of the child tests below with env and reports its wall
// time and peak RSS. The peak is the child's own VmHWM: rusage's Maxrss would
// include the parent's high-water mark, which exec carries over.
func runChild(b *testing.B, kind string, env ...string) {
	b.Helper()
	// TestMain hands the child to childMain before any test runs; -test.run=^$ is a second guard
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+kind), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	b.ReportMetric(time.Since(start).Seconds(), "wall_s")
	// CPU as well as wall: on a shared machine the wall time moves with the others' load, the
	// CPU seconds much less, and CPU over wall says how well the two cores were kept busy.
	b.ReportMetric((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), "cpu_s")
	m := hwmRe.FindSubmatch(out)
	if m == nil {
		b.Fatalf("child printed no peak RSS:\n%s", out)
	}
	kb, _ := strconv.Atoi(string(m[1]))
	b.ReportMetric(float64(kb)/1024, "peak_RSS_MB")
	// The Go runtime's share (heap, stacks, GC metadata it ever mapped); the rest is DuckDB's.
	kb, _ = strconv.Atoi(string(m[2]))
	b.ReportMetric(float64(kb)/1024, "go_sys_MB")
}

var hwmRe = regexp.MustCompile(`child VmHWM: (\d+) kB, Go runtime Sys: (\d+) kB`)

// printPeakRSS is the last thing a child does: its peak RSS for runChild.
func printPeakRSS() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return errors.New("no VmHWM in /proc/self/status")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("child VmHWM: %s kB, Go runtime Sys: %d kB\n", m[1], ms.Sys>>10)
	return nil
}

// BenchmarkAllReports1M writes every report, xlsx and csv, from a ~1M-record
// warehouse, in a child process so its peak RSS is the reports' alone.
func BenchmarkAllReports1M(b *testing.B) {
	db := benchWarehouse(b)
	for range b.N {
		runChild(b, "report", "BILLSYNC_REPORT_CHILD_DB="+db, "BILLSYNC_REPORT_CHILD_OUT="+b.TempDir())
	}
}

// BenchmarkReports1M is BenchmarkAllReports1M one report at a time.
func BenchmarkReports1M(b *testing.B) {
	db := benchWarehouse(b)
	defs, err := Definitions()
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range defs {
		b.Run(d.Name, func(b *testing.B) {
			for range b.N {
				runChild(b, "report", "BILLSYNC_REPORT_CHILD_DB="+db, "BILLSYNC_REPORT_CHILD_OUT="+b.TempDir(),
					"BILLSYNC_REPORT_CHILD_NAMES="+d.Name)
			}
		})
	}
}

// BenchmarkQueries1M runs each sheet's query alone, rows discarded, with the
// report's connection settings and variables: where the native memory goes.
// "open" is the floor: the child opens the warehouse and runs nothing.
func BenchmarkQueries1M(b *testing.B) {
	db := benchWarehouse(b)
	defs, err := Definitions()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("open", func(b *testing.B) {
		for range b.N {
			runChild(b, "query", "BILLSYNC_REPORT_CHILD_DB="+db, "BILLSYNC_REPORT_CHILD_QUERY=aging/")
		}
	})
	for _, d := range defs {
		for _, sh := range d.Sheets {
			b.Run(strings.TrimSuffix(sh.Query, ".sql"), func(b *testing.B) {
				for range b.N {
					runChild(b, "query", "BILLSYNC_REPORT_CHILD_DB="+db, "BILLSYNC_REPORT_CHILD_QUERY="+d.Name+"/"+sh.Query)
				}
			})
		}
	}
}

// childEnv names the child a benchmark starts in a process of its own, so that the child's peak
// RSS is its work's alone: "report" (reportChild), "query" (queryChild) or "release" (releaseChild,
// a test's).
const childEnv = "BILLSYNC_REPORT_CHILD"

// childMain runs the child named by childEnv and returns the process's exit code.
// BILLSYNC_REPORT_CHILD_CPUPROFILE names a file for the child's CPU profile (go tool pprof).
func childMain(kind string) int {
	if p := os.Getenv("BILLSYNC_REPORT_CHILD_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	switch kind {
	case "report":
		err = reportChild()
	case "query":
		err = queryChild()
	case "release":
		err = releaseChild()
	default:
		err = fmt.Errorf("unknown %s %q", childEnv, kind)
	}
	if err == nil {
		err = printPeakRSS()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// reportChild is BenchmarkAllReports1M's and BenchmarkReports1M's child.
func reportChild() error {
	var formats, names []string
	if f := os.Getenv("BILLSYNC_REPORT_CHILD_FORMATS"); f != "" {
		formats = strings.Split(f, ",")
	}
	if n := os.Getenv("BILLSYNC_REPORT_CHILD_NAMES"); n != "" {
		names = strings.Split(n, ",")
	}
	asOf, err := childAsOf()
	if err != nil {
		return err
	}
	_, err = Generate(context.Background(), Options{Report: config.Report{ReportsOut: os.Getenv("BILLSYNC_REPORT_CHILD_OUT")}, DB: os.Getenv("BILLSYNC_REPORT_CHILD_DB"),
		Formats: formats, Names: names, AsOf: asOf, Log: quiet})
	return err
}

// queryChild is BenchmarkQueries1M's child: BILLSYNC_REPORT_CHILD_QUERY is report/query.sql
// (report/ alone opens the warehouse and stops there).
func queryChild() error {
	name, file, _ := strings.Cut(os.Getenv("BILLSYNC_REPORT_CHILD_QUERY"), "/")
	defs, err := selectReports([]string{name})
	if err != nil {
		return err
	}
	ctx := context.Background()
	out, err := os.MkdirTemp("", "billsync-query-child-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	asOf, err := childAsOf()
	if err != nil {
		return err
	}
	s, err := Options{Report: config.Report{ReportsOut: out}, DB: os.Getenv("BILLSYNC_REPORT_CHILD_DB"), AsOf: asOf, Log: quiet}.resolve()
	if err != nil {
		return err
	}
	h, err := openWarehouse(ctx, s.DB)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := s.proveZone(ctx, h); err != nil {
		return err
	}
	conn, err := h.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := prepareConn(ctx, conn, false); err != nil {
		return err
	}
	if _, err := setReportVars(ctx, conn, s, defs[0]); err != nil {
		return err
	}
	if file == "" {
		return nil
	}
	n := 0
	if err := stream(ctx, conn, file, func(result) error { return nil }, func([]any) error { n++; return nil }); err != nil {
		return err
	}
	if n == 0 && !journalOnly[file] {
		return fmt.Errorf("%s returned no rows: the measurement proves nothing", file)
	}
	return nil
}

// journalOnly are the query files whose rows come from the job journal, which the benchmark
// warehouse has none of: they run (their cost is credit_balances', measured on its own) but
// return no rows.
var journalOnly = map[string]bool{"credit_reconciliation.sql": true}

// benchSQL is the sheet both xlsx benchmarks write: 200k rows x 10 columns.
const benchSQL = `SELECT account, id, customer_name, customer_email, type, created_at, amount, payment_link_id, payment_url, first_seen_at
	FROM unpaid_transactions UNION ALL SELECT account, id, customer_name, customer_email, type, created_at, amount, customer_id, name, first_seen_at FROM invoices LIMIT 200000`

// BenchmarkXLSX compares the report's xlsx path (query, conversion, styles,
// streamed sheet) with raw excelize StreamWriter writing the same rows from memory.
func BenchmarkXLSX(b *testing.B) {
	db := benchWarehouse(b)
	b.Run("report", func(b *testing.B) {
		for range b.N {
			_, err := Query(context.Background(), Options{Report: config.Report{ReportsOut: b.TempDir()}, DB: db, Log: quiet}, benchSQL, "xlsx", nil)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw-excelize", func(b *testing.B) {
		data := loadRows(b, db)
		b.ResetTimer()
		for range b.N {
			f := excelize.NewFile()
			sw, err := f.NewStreamWriter("Sheet1")
			if err != nil {
				b.Fatal(err)
			}
			for i, r := range data {
				cell, _ := excelize.CoordinatesToCellName(1, i+1)
				if err := sw.SetRow(cell, r); err != nil {
					b.Fatal(err)
				}
			}
			if err := sw.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := f.SaveAs(filepath.Join(b.TempDir(), "raw.xlsx")); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}

// loadRows reads benchSQL into memory as the raw benchmark's input.
func loadRows(b *testing.B, db string) [][]any {
	h, err := warehouse.OpenReadOnly(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	rows, err := h.Query(benchSQL)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		r := make([]any, 10)
		p := make([]any, 10)
		for i := range r {
			p[i] = &r[i]
		}
		if err := rows.Scan(p...); err != nil {
			b.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
