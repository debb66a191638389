package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/sethvargo/go-envconfig"
	"github.com/xuri/excelize/v2"

	"github.com/billsync/billsync/internal/api"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/internal/warehouse"
)

const lakeTestKey = "sk-test-lakeread-7f3e9a21-secret"

// lakeMerchant is one account's syncer: its own simulator over HTTP and its own DuckDB file,
// committing to the shared lake after each sync, as the syncer does with BILLSYNC_LAKE.
type lakeMerchant struct {
	name string
	sb   *sandbox.Server
	url  string
	path string
}

func newLakeMerchant(t *testing.T, i int) *lakeMerchant {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: int64(300 + i), Scale: 0.02, Now: time.Date(2026, 10, 31, 3, 0, 0, 0, time.UTC), Key: lakeTestKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	name := fmt.Sprintf("merchant_%02d", i)
	return &lakeMerchant{name: name, sb: sb, url: srv.URL, path: filepath.Join(t.TempDir(), name+".duckdb")}
}

func (m *lakeMerchant) sync(t *testing.T, cfg conf.Lake) {
	t.Helper()
	ctx := context.Background()
	lk, err := lake.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := api.New(api.Config{BaseURL: m.url, APIKey: lakeTestKey, Unlimited: true, MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var commitErr error
	opts := syncrun.Options{Options: fetch.Options{Fetch: conf.Fetch{PageSize: 100, Concurrency: 2, Details: true, MaxClockSkew: fetch.TrustServiceClock},
		Account: m.name}, Lake: lk, LakeDone: func(_ lake.Result, err error) { commitErr = err }}
	if _, err := syncrun.Run(ctx, m.path, []syncrun.Account{{Name: m.name, Client: c}}, opts); err != nil {
		t.Fatalf("%s: sync: %v", m.name, err)
	}
	if commitErr != nil {
		t.Fatalf("%s: lake commit: %v", m.name, commitErr)
	}
}

// reportCSVs runs report with args, writing CSVs into a new directory, and returns each
// file's bytes by its name with the as-of date taken out (the names carry it).
func reportCSVs(t *testing.T, env map[string]string, args ...string) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args = append([]string{"-out", dir, "-format", "csv"}, args...)
	if err := run(context.Background(), args, envconfig.MapLookuper(env), strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("report %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if strings.Contains(stderr.String(), lakeTestKey) || strings.Contains(stdout.String(), lakeTestKey) {
		t.Error("the API key is in report's output")
	}
	out := map[string][]byte{}
	for _, p := range strings.Fields(stdout.String()) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	if len(out) == 0 {
		t.Fatalf("report %s wrote no CSV:\n%s", strings.Join(args, " "), stderr.String())
	}
	return out
}

// sameCSVs says how two reports' CSVs differ: files only in one, files whose bytes differ.
func sameCSVs(a, b map[string][]byte) []string {
	var diffs []string
	for name, x := range a {
		y, ok := b[name]
		switch {
		case !ok:
			diffs = append(diffs, name+": only in the first")
		case !bytes.Equal(x, y):
			diffs = append(diffs, fmt.Sprintf("%s: %s", name, firstDiff(x, y)))
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			diffs = append(diffs, name+": only in the second")
		}
	}
	slices.Sort(diffs)
	return diffs
}

func firstDiff(x, y []byte) string {
	xl, yl := strings.Split(string(x), "\n"), strings.Split(string(y), "\n")
	for i := range min(len(xl), len(yl)) {
		if xl[i] != yl[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, xl[i], yl[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(xl), len(yl))
}

// newestSnapshot is the snapshot of the lake committed last, over all its tables.
func newestSnapshot(t *testing.T, cfg conf.Lake) *table.Snapshot {
	t.Helper()
	lk, err := lake.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var newest *table.Snapshot
	for _, name := range lake.Tables() {
		tbl, err := lk.Catalog().LoadTable(context.Background(), table.Identifier{lk.Namespace(), name})
		if err != nil {
			continue
		}
		if s := tbl.CurrentSnapshot(); s != nil && (newest == nil || s.TimestampMs >= newest.TimestampMs) {
			newest = s
		}
	}
	if newest == nil {
		t.Fatal("the lake has no snapshot")
	}
	return newest
}

// TestLakeReportsEqualTheFile: two merchants sync from their simulators into their DuckDB
// files and commit to one lake. Every report's CSVs over the lake at the newest snapshot, for
// one account, equal byte for byte the CSVs over that account's file. A day later both sync
// again: the report at the first snapshot (by id, and by a time between the two days) is the
// same as before, and the report at the latest differs from it and equals the new file's.
func TestLakeReportsEqualTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs two simulators and writes every report nine times")
	}
	dir := t.TempDir()
	cfg := conf.Lake{LakeAccess: conf.LakeAccess{Root: "file://" + filepath.Join(dir, "warehouse"), Catalog: "sqlite://" + filepath.Join(dir, "catalog.db"), Namespace: "billsync"}}
	env := map[string]string{"BILLSYNC_LAKE": cfg.Root, "BILLSYNC_LAKE_CATALOG": cfg.Catalog, "BILLSYNC_TZ": "Asia/Jakarta"}
	ms := []*lakeMerchant{newLakeMerchant(t, 1), newLakeMerchant(t, 2)}
	for _, m := range ms {
		m.sync(t, cfg)
	}
	one := ms[1] // the second account's partition: the first's rows are beside it
	const asOf = "2026-11-01"
	file1 := reportCSVs(t, nil, "-db", one.path, "-account", one.name, "-as-of", asOf)
	s1 := newestSnapshot(t, cfg)
	between := time.UnixMilli(s1.TimestampMs).Add(time.Second)
	lake1 := reportCSVs(t, env, "-account", one.name, "-as-of", asOf, "-as-of-snapshot", fmt.Sprint(s1.SnapshotID))
	if d := sameCSVs(file1, lake1); len(d) > 0 {
		t.Errorf("the lake's reports at snapshot %d differ from the file's:\n%s", s1.SnapshotID, strings.Join(d, "\n"))
	}
	var names []string
	for name, b := range file1 {
		names = append(names, fmt.Sprintf("%s (%d lines)", strings.TrimPrefix(name, "merchant_02_"), bytes.Count(b, []byte("\n"))))
	}
	slices.Sort(names)
	t.Logf("%d CSVs equal byte for byte (file and lake at snapshot %d): %s", len(file1), s1.SnapshotID, strings.Join(names, ", "))

	time.Sleep(1100 * time.Millisecond) // the next commits come after the time read above
	for _, m := range ms {
		m.sb.Advance(24 * time.Hour)
		m.sync(t, cfg)
	}
	file2 := reportCSVs(t, nil, "-db", one.path, "-account", one.name, "-as-of", asOf)
	again := reportCSVs(t, env, "-account", one.name, "-as-of", asOf, "-as-of-snapshot", fmt.Sprint(s1.SnapshotID))
	if d := sameCSVs(lake1, again); len(d) > 0 {
		t.Errorf("the report at snapshot %d changed after later commits:\n%s", s1.SnapshotID, strings.Join(d, "\n"))
	}
	byTime := reportCSVs(t, env, "-account", one.name, "-as-of", asOf, "-as-of-time", between.Format(time.RFC3339Nano))
	if d := sameCSVs(lake1, byTime); len(d) > 0 {
		t.Errorf("the report at %s differs from the one at snapshot %d:\n%s", between.Format(time.RFC3339Nano), s1.SnapshotID, strings.Join(d, "\n"))
	}
	latest := reportCSVs(t, env, "-account", one.name, "-as-of", asOf)
	if len(sameCSVs(lake1, latest)) == 0 {
		t.Error("the report at the latest snapshot equals the one at the first: the second day's commits are not read")
	}
	if d := sameCSVs(file2, latest); len(d) > 0 {
		t.Errorf("the lake's reports at the latest snapshot differ from the file's:\n%s", strings.Join(d, "\n"))
	}
}

// fleetAging is, per account, what its customers owe at the end of 2026-10-31 (WIB), computed
// here from the account's own DuckDB file without the report's macros: every unpaid
// transaction, and the active invoices and unpaid or active payment requests the unpaid list
// never had; due = expiredAt, else created + 14 days (docs/reports.md). Each world was synced
// once, on that day, so the figures as of its end are the records as they are.
const fleetAging = `WITH cut AS (SELECT timezone('Asia/Jakarta', TIMESTAMP '2026-11-01 00:00:00') AS c),
items AS (
    SELECT u.customer_id, u.customer_name, u.customer_email, u.created_at, u.expired_at, u.amount
    FROM unpaid_transactions u, cut WHERE u.created_at < c AND u.deleted_upstream_at IS NULL
    UNION ALL
    SELECT i.customer_id, i.customer_name, i.customer_email, i.created_at, i.expired_at, i.amount
    FROM invoices i, cut WHERE i.created_at < c AND i.deleted_upstream_at IS NULL AND i.status = 'active'
      AND NOT EXISTS (SELECT 1 FROM unpaid_transactions x WHERE x.payment_link_id = i.id)
    UNION ALL
    SELECT NULL, r.name, NULL, r.created_at, r.expired_at, r.amount
    FROM payment_requests r, cut WHERE r.created_at < c AND r.deleted_upstream_at IS NULL AND r.status IN ('unpaid', 'active')
      AND NOT EXISTS (SELECT 1 FROM unpaid_transactions x WHERE x.payment_link_id = r.id)
),
aged AS (
    SELECT *, DATE '2026-10-31' - (coalesce(expired_at, created_at + INTERVAL 14 DAY) AT TIME ZONE 'Asia/Jakarta')::DATE AS days FROM items
)
SELECT (SELECT count(*) FROM (SELECT DISTINCT customer_name, customer_email, customer_id FROM aged))::VARCHAR,
       count(*)::VARCHAR,
       coalesce(sum(amount) FILTER (days <= 0), 0)::VARCHAR, coalesce(sum(amount) FILTER (days BETWEEN 1 AND 30), 0)::VARCHAR,
       coalesce(sum(amount) FILTER (days BETWEEN 31 AND 60), 0)::VARCHAR, coalesce(sum(amount) FILTER (days BETWEEN 61 AND 90), 0)::VARCHAR,
       coalesce(sum(amount) FILTER (days > 90), 0)::VARCHAR, coalesce(sum(amount), 0)::VARCHAR,
       coalesce(max(days) FILTER (days > 0)::VARCHAR, '')
FROM aged`

// TestFleetAgingPerAccount: three merchants' syncs committed to one lake; the aging report
// over the lake for every account has, in its workbook's By account sheet (Per akun), one row
// per account whose every figure is this test's own SQL over that account's DuckDB file, and a
// totals row adding them up; its CSV says the same.
func TestFleetAgingPerAccount(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs three simulators")
	}
	dir := t.TempDir()
	cfg := conf.Lake{LakeAccess: conf.LakeAccess{Root: "file://" + filepath.Join(dir, "warehouse"), Catalog: "sqlite://" + filepath.Join(dir, "catalog.db"), Namespace: "billsync"}}
	env := map[string]string{"BILLSYNC_LAKE": cfg.Root, "BILLSYNC_LAKE_CATALOG": cfg.Catalog}
	ms := []*lakeMerchant{newLakeMerchant(t, 11), newLakeMerchant(t, 12), newLakeMerchant(t, 13)}
	want := map[string][]string{}
	total := make([]int64, 8)
	for _, m := range ms {
		m.sync(t, cfg)
		row := independentAging(t, m.path)
		want[m.name] = row
		for i := range 8 {
			n, _ := strconv.ParseInt(row[i], 10, 64)
			total[i] += n
		}
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"-out", out, "-as-of", "2026-10-31", "aging"}
	if err := run(context.Background(), args, envconfig.MapLookuper(env), strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("report %v: %v\n%s", args, err, stderr.String())
	}
	var book, csvFile string
	for _, p := range strings.Fields(stdout.String()) {
		switch {
		case strings.HasSuffix(p, ".xlsx"):
			book = p
		case strings.HasSuffix(p, "_by-account.csv"):
			csvFile = p
		}
	}
	f, err := excelize.OpenFile(book)
	if err != nil {
		t.Fatalf("workbook %q: %v (report printed %s)", book, err, stdout.String())
	}
	defer f.Close()
	rows, err := f.GetRows("Per akun", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	var totals []string
	for _, r := range rows {
		switch {
		case len(r) == 0:
		case want[r[0]] != nil:
			got[r[0]] = cells(r, 1, 10)
		case r[0] == "Total":
			totals = cells(r, 1, 9)
		}
	}
	for _, m := range ms {
		if strings.Join(got[m.name], " ") != strings.Join(want[m.name], " ") {
			t.Errorf("%s: the workbook's By account row\n  %v\nthe account's own SQL\n  %v", m.name, got[m.name], want[m.name])
		}
	}
	var wantTotals []string
	for _, n := range total {
		wantTotals = append(wantTotals, fmt.Sprint(n))
	}
	if strings.Join(totals, " ") != strings.Join(wantTotals, " ") {
		t.Errorf("the totals row %v, the accounts' sums %v", totals, wantTotals)
	}
	b, err := os.ReadFile(csvFile)
	if err != nil {
		t.Fatalf("the By account CSV: %v (report printed %s)", err, stdout.String())
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(ms)+1 {
		t.Errorf("the By account CSV has %d lines, want a header and %d accounts:\n%s", len(recs), len(ms), b)
	}
	for _, r := range recs[1:] {
		if w := want[r[0]]; w == nil || strings.Join(cells(r, 1, 10), " ") != strings.Join(w, " ") {
			t.Errorf("CSV row %v, the account's own SQL %v", r, w)
		}
	}
	t.Logf("By account: %v; totals %v", got, totals)

	// An account the lake does not hold is named, with those it holds: never an empty report.
	stdout.Reset()
	stderr.Reset()
	err = run(context.Background(), []string{"-out", out, "-account", "merchant_99", "aging"}, envconfig.MapLookuper(env), strings.NewReader(""), &stdout, &stderr)
	if want := `the lake holds no rows of account "merchant_99"`; err == nil || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "merchant_11, merchant_12, merchant_13") {
		t.Errorf("an account the lake has not: %v, want %q and the accounts it has", err, want)
	}
}

// independentAging is fleetAging's one row over the DuckDB file at path.
func independentAging(t *testing.T, path string) []string {
	t.Helper()
	db, err := warehouse.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vals := make([]string, 9)
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := db.QueryRow(fleetAging).Scan(dest...); err != nil {
		t.Fatal(err)
	}
	if vals[1] == "0" {
		t.Fatalf("%s: no open item: the test would compare nothing", path)
	}
	return vals
}

// cells are r[from:to] with missing cells empty, integers without a fraction.
func cells(r []string, from, to int) []string {
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		v := ""
		if i < len(r) {
			v = strings.TrimSuffix(r[i], ".0")
		}
		out = append(out, v)
	}
	return out
}

// TestLakeFlags: a point of the lake without a lake, two points, or a time that parses as
// neither form is refused before anything runs, naming the flag; a date is its last
// millisecond in the zone.
func TestLakeFlags(t *testing.T) {
	lakeEnv := map[string]string{"BILLSYNC_LAKE": "file:///srv/lake", "BILLSYNC_LAKE_CATALOG": "sqlite:///srv/lake/catalog.db"}
	for _, tc := range []struct {
		env     map[string]string
		args    []string
		wantErr string
		want    string // lakeTime, RFC 3339
	}{
		{nil, []string{"-as-of-snapshot", "42"}, "give -lake (BILLSYNC_LAKE) and -lake-catalog (BILLSYNC_LAKE_CATALOG) too", ""},
		{nil, []string{"-as-of-time", "2026-10-31"}, "give -lake", ""},
		{map[string]string{"BILLSYNC_LAKE": "file:///srv/lake"}, nil, "BILLSYNC_LAKE is set but BILLSYNC_LAKE_CATALOG is not", ""},
		{lakeEnv, []string{"-as-of-snapshot", "42", "-as-of-time", "2026-10-31"}, "only one of -as-of-snapshot and -as-of-time", ""},
		{lakeEnv, []string{"-as-of-snapshot", "-3"}, "-as-of-snapshot -3: want a snapshot id", ""},
		{lakeEnv, []string{"-as-of-time", "31/10/2026"}, `-as-of-time "31/10/2026": want an RFC 3339 time`, ""},
		{lakeEnv, []string{"-as-of-time", "2026-10-31"}, "", "2026-10-31T23:59:59.999+07:00"},
		{lakeEnv, []string{"-tz", "UTC", "-as-of-time", "2026-10-31"}, "", "2026-10-31T23:59:59.999Z"},
		{lakeEnv, []string{"-as-of-time", "2026-11-01T02:30:00+07:00"}, "", "2026-11-01T02:30:00+07:00"},
		{lakeEnv, []string{"-db", "", "-as-of-snapshot", "42"}, "", ""}, // the lake needs no warehouse file
	} {
		c, err := loadConfig(context.Background(), tc.args, envconfig.MapLookuper(tc.env))
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v %v: %v, want %q", tc.env, tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%v %v: %v", tc.env, tc.args, err)
		case tc.want != "":
			at, _ := c.lakeTime()
			if got := at.In(c.TZ.Location()).Format("2006-01-02T15:04:05.999Z07:00"); got != tc.want {
				t.Errorf("%v: the lake read at %s, want %s", tc.args, got, tc.want)
			}
		}
	}
}
