package report

import (
	"context"
	"database/sql"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/internal/warehouse"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const testKey = "sk-report-test-3c1f9a-secret"

// The simulated clock: the first sync runs at midnight of 2026-06-01 in Jakarta,
// the second five days later, at midnight of 2026-06-06.
var (
	firstSync  = time.Date(2026, 5, 31, 17, 0, 0, 0, time.UTC)
	secondSync = firstSync.Add(5 * 24 * time.Hour)
	quiet      = slog.New(slog.NewTextHandler(io.Discard, nil))
)

// world is a warehouse built from the simulator by two syncs, with a copy
// of the warehouse as the first sync published it, and the simulator's
// ground truth at the second sync.
type world struct {
	dir, db, firstDB string
	truth            map[string][][]byte
}

var (
	worldOnce sync.Once
	theWorld  *world
	worldErr  error
)

// testWorld builds the shared world once per test binary (about a second).
func testWorld(t testing.TB) *world {
	t.Helper()
	worldOnce.Do(func() { theWorld, worldErr = buildWorld() })
	if worldErr != nil {
		t.Fatal(worldErr)
	}
	return theWorld
}

func buildWorld() (*world, error) {
	dir, err := os.MkdirTemp("", "report-world-")
	if err != nil {
		return nil, err
	}
	w := &world{dir: dir, db: filepath.Join(dir, "billsync.duckdb"), firstDB: filepath.Join(dir, "first.duckdb"), truth: map[string][][]byte{}}
	sb, err := sandbox.New(sandbox.Options{Seed: 42, Scale: 0.3, Now: firstSync, Key: testKey})
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(sb)
	defer srv.Close()
	client, err := api.New(api.Config{BaseURL: srv.URL, APIKey: testKey, Unlimited: true,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, Logger: quiet})
	if err != nil {
		return nil, err
	}
	sync := func() error {
		_, err := syncrun.Run(context.Background(), w.db, []syncrun.Account{{Name: "main", Client: client}},
			syncrun.Options{Options: fetch.Options{Fetch: config.Fetch{PageSize: 100, Concurrency: 4, Details: true, MaxClockSkew: fetch.TrustServiceClock}, Account: "main", Log: quiet}})
		return err
	}
	if err := sync(); err != nil {
		return nil, err
	}
	if err := copyFile(w.db, w.firstDB); err != nil {
		return nil, err
	}
	sb.Advance(secondSync.Sub(firstSync))
	if err := sync(); err != nil {
		return nil, err
	}
	for _, c := range []string{"unpaid_transactions", "credit_ledger", "reviews", "customers", "invoices"} {
		for _, r := range sb.Dump(c) {
			w.truth[c] = append(w.truth[c], r)
		}
	}
	return w, nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

func TestMain(m *testing.M) {
	if kind := os.Getenv(childEnv); kind != "" {
		os.Exit(childMain(kind))
	}
	code := m.Run()
	if theWorld != nil {
		os.RemoveAll(theWorld.dir)
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// queryRows runs one query file on a fresh read-only connection with vars set,
// returning column names and normalized rows.
// A session zone, when given, is set on the connection first (as report -sql sets it).
func queryRows(t testing.TB, db, file string, vars map[string]string, journal string, sessionZone ...string) ([]string, [][]any) {
	t.Helper()
	ctx := context.Background()
	h, err := warehouse.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, has := attachJournal(ctx, h, journal)
	conn, err := h.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := prepareConn(ctx, conn, has); err != nil {
		t.Fatal(err)
	}
	for _, z := range sessionZone {
		if err := setSessionZone(ctx, conn, z); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range vars {
		typ := "VARCHAR"
		switch k {
		case "as_of", "period_start":
			typ = "DATE"
		case "payment_terms_days", "bucket_1", "bucket_2", "bucket_3", "months", "recent_days", "low_rating_max", "window_days", "runs":
			typ = "INTEGER"
		}
		if err := setVar(ctx, conn, k, typ, v); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	var out [][]any
	err = stream(ctx, conn, file, func(r result) error { names = r.names; return nil }, func(v []any) error {
		out = append(out, append([]any(nil), v...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, out
}

// execDB runs statements on a read-write DuckDB file (test fixtures only).
func execDB(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
