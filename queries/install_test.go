package queries_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/syncdata"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// installed is a migrated, empty warehouse build with the report macros installed.
func installed(t *testing.T) *warehouse.Build {
	t.Helper()
	ctx := context.Background()
	b, err := warehouse.StartBuild(ctx, filepath.Join(t.TempDir(), "billsync.duckdb"), warehouse.BuildOptions{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := queries.Install(ctx, b.DB()); err != nil {
		t.Fatal(err)
	}
	return b
}

// reportObjects lists the macros and views of the file's main schema that the warehouse itself
// does not define (its bs_ macros, table_freshness and its version stamp), with their definitions.
func reportObjects(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`
		SELECT function_name, coalesce(macro_definition, '') FROM duckdb_functions()
		WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'
		  AND function_type IN ('macro', 'table_macro')
		UNION ALL
		SELECT view_name, sql FROM duckdb_views()
		WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "bs_") && name != "table_freshness" && name != "billsync_macros_version" {
			out[name] = def
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInstall: Install creates exactly the objects of macros/ (one per file, named after it),
// report_zone() and the version stamp, and installing again changes nothing.
func TestInstall(t *testing.T) {
	b := installed(t)
	got := reportObjects(t, b.DB())
	want := []string{"billsync_report_macros_version"}
	for _, m := range queries.Macros {
		want = append(want, m.Name)
	}
	slices.Sort(want)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range got {
			if !yield(n) {
				return
			}
		}
	})
	if !slices.Equal(names, want) {
		t.Errorf("installed %v\nwant      %v", names, want)
	}
	if err := queries.Install(context.Background(), b.DB()); err != nil {
		t.Fatal(err)
	}
	if again := reportObjects(t, b.DB()); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("a second Install changed the definitions")
	}
	var v, zone string
	if err := b.DB().QueryRow(`SELECT billsync_report_macros_version(), report_zone()`).Scan(&v, &zone); err != nil {
		t.Fatal(err)
	}
	if v != queries.Version || zone != config.DefaultTZ {
		t.Errorf("version %s, zone %s; want %s, %s", v, zone, queries.Version, config.DefaultTZ)
	}
}

// TestZoneDefault: report_zone() is the zone every report macro's tz defaults to and every
// query file falls back to: BILLSYNC_TZ's default, as the zone each was written with before.
func TestZoneDefault(t *testing.T) {
	b := installed(t)
	var eod, want time.Time
	if err := b.DB().QueryRow(`SELECT end_of_day(DATE '2026-06-05'), end_of_day(DATE '2026-06-05', 'Asia/Jakarta')`).Scan(&eod, &want); err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation(config.DefaultTZ)
	if err != nil {
		t.Fatal(err)
	}
	if exp := time.Date(2026, 6, 6, 0, 0, 0, 0, loc); !eod.Equal(exp) || !want.Equal(exp) {
		t.Errorf("end_of_day by default %v, want %v (BILLSYNC_TZ's default)", eod, exp)
	}
	for _, m := range queries.Macros {
		if strings.Contains(m.SQL, "tz :=") && !strings.Contains(m.SQL, "tz := report_zone()") {
			t.Errorf("%s: a tz parameter not defaulting to report_zone()", m.Name)
		}
	}
}

// zoneRe is a quoted IANA zone name in SQL.
var zoneRe = regexp.MustCompile(`'((?:Africa|America|Asia|Atlantic|Australia|Europe|Indian|Pacific)/[A-Za-z_]+)'`)

// TestNoZoneInSQL: the zone is BILLSYNC_TZ's, set in one place (report_zone(), from
// internal/config); no SQL file of the reports or the warehouse names one, and every query file
// setting tz falls back to report_zone().
func TestNoZoneInSQL(t *testing.T) {
	var files []string
	for _, g := range []string{"*.sql", "macros/*.sql", "../internal/warehouse/*.sql", "../internal/warehouse/*/*.sql", "../internal/report/*.sql"} {
		more, err := filepath.Glob(g)
		if err != nil || len(more) == 0 {
			t.Fatalf("%s: no files (%v)", g, err)
		}
		files = append(files, more...)
	}
	sets := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range zoneRe.FindAllStringSubmatch(string(b), -1) {
			t.Errorf("%s: names the zone %s; use report_zone() or the tz variable", f, m[1])
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "SET VARIABLE tz ") {
				sets++
				if line != "SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());" {
					t.Errorf("%s: %s", f, line)
				}
			}
		}
	}
	if sets == 0 {
		t.Error("no query file sets tz: has the idiom changed?")
	}
}

// runAll runs every *.sql file of fsys on conn, as the report command does (all statements, the
// last one's rows read), and returns the failures by file.
func runAll(ctx context.Context, conn *sql.Conn, fsys fs.FS) map[string]error {
	files, _ := fs.Glob(fsys, "*.sql")
	out := map[string]error{}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err == nil {
			var rows *sql.Rows
			if rows, err = conn.QueryContext(ctx, string(b)); err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
		}
		if err != nil {
			out[f] = err
		}
	}
	return out
}

// TestQueriesBind: every query file runs on a freshly migrated warehouse with the macros
// installed and no journal, so a query calling a macro that does not exist (or with parameters
// it does not have) fails here, named.
func TestQueriesBind(t *testing.T) {
	ctx := context.Background()
	b := installed(t)
	conn, err := b.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := journalfile.Views(ctx, conn, false); err != nil {
		t.Fatal(err)
	}
	for f, err := range runAll(ctx, conn, queries.FS) {
		t.Errorf("%s: %v", f, err)
	}
	if n, _ := fs.Glob(queries.FS, "*.sql"); len(n) < 10 {
		t.Errorf("%d query files", len(n))
	}
	// The check fails for what it is meant to catch.
	bad := runAll(ctx, conn, fstest.MapFS{
		"missing.sql": {Data: []byte("SELECT * FROM aging_itemz(current_date)")},
		"param.sql":   {Data: []byte("SELECT * FROM reviews_at(current_date, zone := 'UTC')")},
	})
	if len(bad) != 2 {
		t.Errorf("a call of a missing macro or parameter passed: %v", bad)
	}
}

// TestUseCurrent: on a file another billsync published (its report macros older, the version
// stamp another), a reader's connection gets this version's as temporary objects; on a current
// file it keeps the file's.
func TestUseCurrent(t *testing.T) {
	ctx := context.Background()
	b := installed(t)
	db := b.DB()
	for _, q := range []string{
		"CREATE OR REPLACE MACRO billsync_report_macros_version() AS 'older'",
		"CREATE OR REPLACE MACRO end_of_day(as_of, tz := 'UTC') AS TIMESTAMPTZ '2000-01-01 00:00:00+00'",
		"DROP MACRO TABLE reviews_at",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := journalfile.Views(ctx, conn, false); err != nil {
		t.Fatal(err)
	}
	if err := queries.UseCurrent(ctx, conn); err != nil {
		t.Fatal(err)
	}
	var eod time.Time
	if err := conn.QueryRowContext(ctx, "SELECT end_of_day(DATE '2026-06-05', 'UTC')").Scan(&eod); err != nil {
		t.Fatal(err)
	}
	if !eod.Equal(time.Date(2026, 6, 6, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("end_of_day gave %v: the file's older macro", eod)
	}
	for f, err := range runAll(ctx, conn, queries.FS) {
		t.Errorf("%s on the older file: %v", f, err)
	}
}

// TestDocQueriesRun runs every SQL example of docs/warehouse.md on a small warehouse: its
// tables and the report macros, as a sync publishes them.
func TestDocQueriesRun(t *testing.T) {
	doc, err := os.ReadFile("../docs/warehouse.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 4 {
		t.Fatalf("found %d SQL examples", len(blocks))
	}
	ctx := context.Background()
	b := installed(t)
	t0 := time.Date(2026, 6, 1, 5, 0, 0, 0, time.UTC)
	s, err := b.StartSink(ctx, "main", t0, func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	for e, fixture := range map[entity.Name]string{
		entity.Invoices:           "Invoices__invoice-list-response.json",
		entity.UnpaidTransactions: "Transactions__unpaid-list-response.json",
	} {
		l, err := s.List(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add(ctx, 1, fixtureItems(t, fixture)); err != nil {
			t.Fatal(err)
		}
		if err := l.Finish(ctx); err != nil {
			t.Fatal(err)
		}
	}
	credit := s.Batch(entity.CreditLedger)
	if err := credit.Add(ctx, 1, fixtureItems(t, "CreditBasedProduct__credit-usage-paginate-history-response.json")); err != nil {
		t.Fatal(err)
	}
	if err := credit.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var n int64
	for _, q := range []string{"SELECT count(*) FROM open_items(DATE '2026-12-31')", "SELECT count(*) FROM credit_ledger"} {
		if err := b.DB().QueryRow(q).Scan(&n); err != nil || n == 0 {
			t.Fatalf("%s: %d, %v: the examples would prove little", q, n, err)
		}
	}
	for _, blk := range blocks {
		rows, err := b.DB().Query(string(blk[1]))
		if err != nil {
			t.Errorf("%s\n-> %v", blk[1], err)
			continue
		}
		rows.Close()
	}
}

// fixtureItems returns the `data` items of a fixture file.
func fixtureItems(t *testing.T, name string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "laravel-mayar", name))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	var env struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil || len(env.Data) == 0 {
		t.Fatalf("fixture %s: %d items, %v", name, len(env.Data), err)
	}
	return env.Data
}
