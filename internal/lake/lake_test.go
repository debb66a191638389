package lake_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/logbuf"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/internal/testpg"
	"github.com/billsync/billsync/internal/warehouse"
)

const testKey = "sk-test-lake-4b3a2c1d-secret"

var testNow = time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)

// merchant is one account's syncer: its own simulator over HTTP and its own DuckDB file.
type merchant struct {
	name string
	sb   *sandbox.Server
	url  string
	path string
}

func newMerchant(t *testing.T, i int) *merchant {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: int64(100 + i), Scale: 0.02, Now: testNow, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	name := fmt.Sprintf("merchant_%02d", i)
	return &merchant{name: name, sb: sb, url: srv.URL, path: filepath.Join(t.TempDir(), name+".duckdb")}
}

// sync runs one sync of the merchant, committing to lk when it is set.
func (m *merchant) sync(ctx context.Context, t *testing.T, lk *lake.Lake, log *slog.Logger, done func(lake.Result, error)) {
	c, err := api.New(api.Config{BaseURL: m.url, APIKey: testKey, Unlimited: true, MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Error(err)
		return
	}
	opts := syncrun.Options{Options: fetch.Options{Fetch: config.Fetch{PageSize: 100, Concurrency: 2, Details: true, MaxClockSkew: fetch.TrustServiceClock},
		Account: m.name, Log: log}, Lake: lk, LakeDone: done}
	if _, err := syncrun.Run(ctx, m.path, []syncrun.Account{{Name: m.name, Client: c}}, opts); err != nil {
		t.Errorf("%s: sync: %v", m.name, err)
	}
}

// store is a lake opened over one backend, and how to measure its files.
type store struct {
	cfg  config.Lake
	size func(t *testing.T) (files int, bytes int64)
}

// backend is one catalog and store a conformance test runs over.
type backend struct {
	name string
	open func(t *testing.T) store
}

// backends are every catalog and store billsync supports and this machine runs: the SQLite
// catalog on local files, a PostgreSQL catalog (a throwaway cluster, internal/testpg) on local
// files, and the SQLite catalog over an S3 store (gofakes3, in-process).
func backends() []backend {
	local := func(catalog func(t *testing.T, dir string) string) func(t *testing.T) store {
		return func(t *testing.T) store {
			dir := t.TempDir()
			cfg := config.Lake{LakeAccess: config.LakeAccess{Root: "file://" + filepath.Join(dir, "warehouse"), Catalog: catalog(t, dir), Namespace: "billsync"}}
			return store{cfg: cfg, size: func(t *testing.T) (int, int64) { return lakeSize(t, filepath.Join(dir, "warehouse")) }}
		}
	}
	return []backend{
		{"sqlite", local(func(t *testing.T, dir string) string { return "sqlite://" + filepath.Join(dir, "catalog.db") })},
		{"postgres", local(func(t *testing.T, dir string) string { return testpg.Start(t) })},
		{"s3", func(t *testing.T) store {
			backend, url := fakeS3(t)
			cfg := config.Lake{LakeAccess: config.LakeAccess{Root: "s3://lake/fleet", S3Endpoint: url, Catalog: "sqlite://" + filepath.Join(t.TempDir(), "catalog.db"), Namespace: "billsync"}}
			return store{cfg: cfg, size: func(t *testing.T) (files int, bytes int64) {
				objs, err := backend.ListBucket("lake", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range objs.Contents {
					files++
					bytes += o.Size
				}
				return files, bytes
			}}
		}},
	}
}

// fakeS3 serves an in-process S3 with the bucket lake, its credentials in the environment.
func fakeS3(t *testing.T) (*s3mem.Backend, string) {
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "test-access")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	return backend, srv.URL
}

func sqliteLake(t *testing.T, dir string) config.Lake {
	return config.Lake{LakeAccess: config.LakeAccess{Root: "file://" + filepath.Join(dir, "warehouse"), Catalog: "sqlite://" + filepath.Join(dir, "catalog.db"), Namespace: "billsync"}}
}

func open(t *testing.T, cfg config.Lake, log *slog.Logger) *lake.Lake {
	t.Helper()
	lk, err := lake.Open(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lk.Close)
	return lk
}

// lakeFiles copies the data files of the account's partition in the table's snapshot (0: the
// current one), as iceberg-go plans a scan of them, to dir: what a reader of the lake reads.
func lakeFiles(t *testing.T, lk *lake.Lake, name, account string, snapshot int64, dir string) []string {
	t.Helper()
	ctx := context.Background()
	tbl, err := lk.Catalog().LoadTable(ctx, table.Identifier{lk.Namespace(), name})
	if err != nil {
		t.Fatalf("lake table %s: %v", name, err)
	}
	opts := []table.ScanOption{table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("account"), account))}
	if snapshot != 0 {
		opts = append(opts, table.WithSnapshotID(snapshot))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		t.Fatalf("plan %s: %v", name, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, task := range tasks {
		if len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0 {
			t.Errorf("%s: a delete file in the account's partition: a reader of data files alone would see deleted rows", name)
		}
		in, err := fsys.Open(task.File.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		local := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.parquet", name, account, i))
		f, err := os.Create(local)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		f.Close()
		out = append(out, local)
	}
	return out
}

// memDuck is an in-memory DuckDB: the reader comparing the lake with the files.
func memDuck(t *testing.T) *sql.DB {
	t.Helper()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// compare checks, row for row, that the lake's partition of each table for the account holds
// exactly the rows of the account's published DuckDB file: DuckDB reads the data files
// iceberg-go lists (as docs/lake.md's DuckDB reader does) and both differences must be empty.
func compare(t *testing.T, lk *lake.Lake, m *merchant, tables []string) (rows int64) {
	t.Helper()
	db := memDuck(t)
	// the file's tables by their own names, as the lake's reads of them name them
	if _, err := db.Exec(fmt.Sprintf(`ATTACH '%s' AS wh (READ_ONLY); USE wh`, m.path)); err != nil {
		t.Fatal(err)
	}
	defer db.Exec(`USE memory; DETACH wh`)
	dir := t.TempDir()
	for _, name := range tables {
		var cols []string
		for _, c := range lake.ColumnsOf(name) {
			switch {
			case c.Type == entity.JSON:
				cols = append(cols, fmt.Sprintf(`"%s"::VARCHAR AS "%s"`, c.Name, c.Name))
			default:
				cols = append(cols, `"`+c.Name+`"`)
			}
		}
		file := fmt.Sprintf(`SELECT %s FROM %s WHERE account = '%s'`, strings.Join(cols, ", "), lake.SourceSQL(name), m.name)
		var want int64
		if err := db.QueryRow(`SELECT count(*) FROM (` + file + `)`).Scan(&want); err != nil {
			t.Fatal(err)
		}
		files := lakeFiles(t, lk, name, m.name, 0, dir)
		if len(files) == 0 {
			if want != 0 {
				t.Errorf("%s %s: the lake has no rows, the file %d", m.name, name, want)
			}
			continue
		}
		lakeQ := fmt.Sprintf(`SELECT %s FROM read_parquet(['%s'], union_by_name = true) WHERE account = '%s'`,
			strings.Join(cols, ", "), strings.Join(files, "','"), m.name)
		var onlyFile, onlyLake, got int64
		q := fmt.Sprintf(`SELECT (SELECT count(*) FROM (%[1]s EXCEPT ALL %[2]s)), (SELECT count(*) FROM (%[2]s EXCEPT ALL %[1]s)), (SELECT count(*) FROM (%[2]s))`, file, lakeQ)
		if err := db.QueryRow(q).Scan(&onlyFile, &onlyLake, &got); err != nil {
			t.Fatalf("%s %s: %v", m.name, name, err)
		}
		if onlyFile != 0 || onlyLake != 0 || got != want {
			t.Errorf("%s %s: %d rows only in the file, %d only in the lake (file %d rows, lake %d)", m.name, name, onlyFile, onlyLake, want, got)
		}
		rows += got
	}
	return rows
}

// snapshotsOf counts the table's snapshots committed for the account at run (its history).
func snapshotsOf(t *testing.T, lk *lake.Lake, name, account string) map[string]int {
	t.Helper()
	tbl, err := lk.Catalog().LoadTable(context.Background(), table.Identifier{lk.Namespace(), name})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[lake.PropAccount] == account {
			out[s.Summary.Properties[lake.PropRun]]++
		}
	}
	return out
}

var errKilled = errors.New("killed between writing the data files and committing")

// TestFleetCommitsConcurrently: ten merchants, each synced from its own simulator into its own
// DuckDB file, commit to one lake (one SQLite catalog, local files) at once. One is killed
// between writing its data files and committing: its table stays as it was, the tables it had
// committed before are its new run's, and its next run completes the rest. Every account's
// partition equals its DuckDB file row for row, each run made at most one snapshot per table,
// and no commit overwrote another account's rows.
//
// It runs over every catalog and store (backends): the SQLite catalog on local files, a
// PostgreSQL catalog, and an S3 store.
func TestFleetCommitsConcurrently(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { fleet(t, b.open(t)) })
	}
}

func fleet(t *testing.T, bk store) {
	const n = 10
	cfg := bk.cfg
	logs := &logbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var ms []*merchant
	for i := range n {
		ms = append(ms, newMerchant(t, i+1))
	}
	killed := ms[3].name
	const killedAt = "invoices" // a table after others in DataTables' order
	restore := lake.StopBeforeCommit(func(ctx context.Context, name, account string) error {
		if account == killed && name == killedAt {
			return errKilled
		}
		return nil
	})
	var mu sync.Mutex
	results := map[string]lake.Result{}
	errs := map[string]error{}
	round := func() {
		var wg sync.WaitGroup
		for _, m := range ms {
			wg.Go(func() {
				// each syncer opens the lake itself, as separate processes do
				lk := open(t, cfg, log)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				m.sync(ctx, t, lk, log, func(r lake.Result, err error) {
					mu.Lock()
					defer mu.Unlock()
					results[m.name], errs[m.name] = r, err
				})
			})
		}
		wg.Wait()
	}
	start := time.Now()
	round()
	first := time.Since(start)
	restore()
	lk := open(t, cfg, nil)
	tables := lake.Tables()
	for _, m := range ms {
		if m.name == killed {
			if !errors.Is(errs[m.name], errKilled) {
				t.Errorf("%s: commit error %v, want the kill", m.name, errs[m.name])
			}
			continue
		}
		if errs[m.name] != nil {
			t.Errorf("%s: commit: %v", m.name, errs[m.name])
		}
		compare(t, lk, m, tables)
	}
	// The killed commit: the table it was committing holds nothing of the account (the lake as
	// it was), its data files written but in no snapshot.
	if files := lakeFiles(t, lk, killedAt, killed, 0, t.TempDir()); len(files) != 0 {
		t.Errorf("%s %s: the killed commit left %d files in the table", killed, killedAt, len(files))
	}
	if run, err := lk.LastRun(context.Background(), killedAt, killed); err != nil || run != 0 {
		t.Errorf("%s %s: the lake records run %d (%v) after a killed commit, want none", killed, killedAt, run, err)
	}

	// A week passes at every merchant; the next runs commit their changes and the killed
	// merchant's missing tables.
	for _, m := range ms {
		m.sb.Advance(7 * 24 * time.Hour)
	}
	clear(results)
	clear(errs)
	start = time.Now()
	round()
	second := time.Since(start)
	var retries, snaps int
	var rows int64
	var commitTook, maxTook time.Duration
	for _, m := range ms {
		commitTook += results[m.name].Took
		maxTook = max(maxTook, results[m.name].Took)
		if errs[m.name] != nil {
			t.Errorf("%s: second commit: %v", m.name, errs[m.name])
		}
		s, r := results[m.name].Snapshots()
		snaps, retries = snaps+s, retries+r
		rows += compare(t, lk, m, tables)
		for _, name := range tables {
			for run, k := range snapshotsOf(t, lk, name, m.name) {
				if k > 1 {
					t.Errorf("%s %s: run %s made %d snapshots, want at most one", m.name, name, run, k)
				}
			}
		}
	}
	files, bytes := bk.size(t)
	t.Logf("ten accounts: first round %s, second %s (syncs and commits); second round: commits %s per run on average, %s the longest, %d snapshots, %d conflicts retried, %d rows; lake %d files, %d bytes",
		first.Round(time.Millisecond), second.Round(time.Millisecond), (commitTook / n).Round(time.Millisecond), maxTook.Round(time.Millisecond), snaps, retries, rows, files, bytes)
	if t.Failed() {
		t.Log(logs.String())
	}
}

func lakeSize(t *testing.T, root string) (files int, bytes int64) {
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
			if fi, err := d.Info(); err == nil {
				bytes += fi.Size()
			}
		}
		return nil
	})
	return files, bytes
}

// TestCommitIsIdempotent: committing the same published file again makes no snapshot, and a
// file older than what the lake holds is refused, not committed over it.
func TestCommitIsIdempotent(t *testing.T) {
	ctx := context.Background()
	m := newMerchant(t, 1)
	m.sync(ctx, t, nil, nil, nil)
	dir := t.TempDir()
	lk := open(t, sqliteLake(t, dir), nil)
	res, err := lk.Commit(ctx, m.path, []string{m.name})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.Snapshots()
	if n == 0 {
		t.Fatal("the first commit made no snapshot")
	}
	files, size := lakeSize(t, filepath.Join(dir, "warehouse"))
	fi, _ := os.Stat(m.path)
	t.Logf("first commit of one account: %s, %d snapshots; lake %d files, %d bytes; the DuckDB file %d bytes", res.Took.Round(time.Millisecond), n, files, size, fi.Size())
	older := filepath.Join(t.TempDir(), "older.duckdb")
	copyFile(t, m.path, older)
	res, err = lk.Commit(ctx, m.path, []string{m.name})
	if n, _ := res.Snapshots(); err != nil || n != 0 {
		t.Errorf("committing the same file again: %d snapshots, %v; want none", n, err)
	}
	m.sb.Advance(7 * 24 * time.Hour)
	m.sync(ctx, t, nil, nil, nil)
	res, err = lk.Commit(ctx, m.path, []string{m.name})
	if err != nil {
		t.Fatal(err)
	}
	n, _ = res.Snapshots()
	files, size = lakeSize(t, filepath.Join(dir, "warehouse"))
	t.Logf("a week later: %s, %d snapshots; lake %d files, %d bytes", res.Took.Round(time.Millisecond), n, files, size)
	compare(t, lk, m, lake.Tables())
	_, err = lk.Commit(ctx, older, []string{m.name})
	if err == nil || !strings.Contains(err.Error(), "the lake is ahead of the file") {
		t.Errorf("committing an older file: %v, want a refusal", err)
	}
	compare(t, lk, m, lake.Tables())
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDeclarationGainsAField: a newer billsync whose declaration of customers gains a field
// (its warehouse has the column) adds the column to the lake's table; the snapshot before it
// still reads as it was, and the new snapshot equals the file, the new column included.
func TestDeclarationGainsAField(t *testing.T) {
	ctx := context.Background()
	m := newMerchant(t, 2)
	m.sync(ctx, t, nil, nil, nil)
	lk := open(t, sqliteLake(t, t.TempDir()), nil)
	if _, err := lk.Commit(ctx, m.path, []string{m.name}); err != nil {
		t.Fatal(err)
	}
	tbl, err := lk.Catalog().LoadTable(ctx, table.Identifier{lk.Namespace(), "customers"})
	if err != nil {
		t.Fatal(err)
	}
	before := tbl.CurrentSnapshot().SnapshotID

	// The newer billsync's migration: the column, filled by its next sync.
	col := warehouse.Column{Name: "loyalty_tier", Type: entity.Text}
	defer lake.DeclareColumn("customers", col)()
	db := memDuck(t)
	for _, q := range []string{fmt.Sprintf(`ATTACH '%s' AS wh`, m.path), `ALTER TABLE wh.customers ADD COLUMN loyalty_tier VARCHAR`,
		`UPDATE wh.customers SET loyalty_tier = CASE WHEN hash(id) % 2 = 0 THEN 'gold' END`, `DETACH wh`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	res, err := lk.Commit(ctx, m.path, []string{m.name})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.Snapshots(); n != 1 {
		t.Errorf("%d snapshots, want 1 (customers)", n)
	}
	tbl, err = lk.Catalog().LoadTable(ctx, table.Identifier{lk.Namespace(), "customers"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tbl.Schema().FindFieldByName("loyalty_tier"); !ok {
		t.Fatalf("the lake's customers have no loyalty_tier: %s", tbl.Schema())
	}
	compare(t, lk, m, []string{"customers"})

	// the snapshot before the column: its files and rows as they were
	files := lakeFiles(t, lk, "customers", m.name, before, t.TempDir())
	var rows, tiers int64
	q := fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE 'loyalty_tier' IN (SELECT name FROM parquet_schema('%s'))) FROM read_parquet(['%s'])`,
		files[0], strings.Join(files, "','"))
	if err := memDuck(t).QueryRow(q).Scan(&rows, &tiers); err != nil {
		t.Fatal(err)
	}
	if rows == 0 || tiers != 0 {
		t.Errorf("the snapshot before the column: %d rows, %d with the column; want its rows, none", rows, tiers)
	}
	arrowTbl, err := tbl.Scan(table.WithSnapshotID(before)).ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("reading the snapshot before the column through iceberg-go: %v", err)
	}
	defer arrowTbl.Release()
	if arrowTbl.NumRows() != rows {
		t.Errorf("iceberg-go reads %d rows of the old snapshot, DuckDB %d", arrowTbl.NumRows(), rows)
	}
}

// TestS3Lake: an s3:// lake (an in-process S3) with its SQLite catalog: the commit lands in the
// bucket and reads back equal to the file.
func TestS3Lake(t *testing.T) {
	backend, url := fakeS3(t)
	ctx := context.Background()
	m := newMerchant(t, 3)
	m.sync(ctx, t, nil, nil, nil)
	cfg := config.Lake{LakeAccess: config.LakeAccess{Root: "s3://lake/fleet", S3Endpoint: url, Catalog: "sqlite://" + filepath.Join(t.TempDir(), "catalog.db"), Namespace: "billsync"}}
	lk := open(t, cfg, nil)
	if _, err := lk.Commit(ctx, m.path, []string{m.name}); err != nil {
		t.Fatal(err)
	}
	compare(t, lk, m, lake.Tables())
	objs, err := backend.ListBucket("lake", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	var data int
	for _, o := range objs.Contents {
		if !strings.HasPrefix(o.Key, "fleet/billsync.db/") {
			t.Errorf("object %s outside the lake's prefix", o.Key)
		}
		if strings.HasSuffix(o.Key, ".parquet") {
			data++
		}
	}
	if data == 0 {
		t.Error("no data file in the bucket")
	}
}

// TestOpenErrors: settings no lake opens with are refused with the variable named and a
// catalog's password never shown.
func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  config.Lake
		want string
	}{
		{config.Lake{LakeAccess: config.LakeAccess{Root: "/data/lake", Catalog: "sqlite:///x.db", Namespace: "billsync"}}, `BILLSYNC_LAKE "/data/lake": want file:///abs/path or s3://bucket/prefix`},
		{config.Lake{LakeAccess: config.LakeAccess{Root: "file:///data/lake", Namespace: "billsync"}}, "BILLSYNC_LAKE_CATALOG is not"},
		{config.Lake{LakeAccess: config.LakeAccess{Catalog: "sqlite:///x.db", Namespace: "billsync"}}, "BILLSYNC_LAKE is not"},
		{config.Lake{LakeAccess: config.LakeAccess{Root: "file:///data/lake", Catalog: "mysql://u:hunter2@db/x", Namespace: "billsync"}}, `BILLSYNC_LAKE_CATALOG "mysql://u:xxxxx@db/x"`},
		{config.Lake{LakeAccess: config.LakeAccess{Root: "file:///data/lake", Catalog: "sqlite:///x.db", Namespace: "Bill-Sync"}}, `BILLSYNC_LAKE_NAMESPACE "Bill-Sync"`},
	} {
		_, err := lake.Open(context.Background(), tc.cfg, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestLakeFailureDoesNotFailTheSync: a lake that cannot be written (its root is a file) fails
// the commit, not the sync: the run publishes, the failure is logged and handed to LakeDone,
// and the lake holds nothing of the run.
func TestLakeFailureDoesNotFailTheSync(t *testing.T) {
	dir := t.TempDir()
	notADir := filepath.Join(dir, "warehouse")
	if err := os.WriteFile(notADir, []byte("a file where the lake's root should be"), 0o644); err != nil {
		t.Fatal(err)
	}
	lk := open(t, sqliteLake(t, dir), nil)
	logs := &logbuf.Buffer{}
	m := newMerchant(t, 4)
	var got error
	called := false
	m.sync(context.Background(), t, lk, slog.New(slog.NewTextHandler(logs, nil)), func(_ lake.Result, err error) { called, got = true, err })
	if _, err := os.Stat(m.path); err != nil {
		t.Fatalf("the sync did not publish: %v", err)
	}
	if !called || got == nil {
		t.Fatalf("LakeDone called %v with %v, want the commit's failure", called, got)
	}
	if !strings.Contains(logs.String(), "lake commit failed: the published warehouse is unaffected") {
		t.Errorf("the failure is not logged:\n%s", logs.String())
	}
	if run, err := lk.LastRun(context.Background(), "customers", m.name); err == nil && run != 0 {
		t.Errorf("the lake records run %d after a failed commit", run)
	}
}

// TestCommitSeesEveryChange: every change of the file's rows is committed, whichever column and
// however many rows: among them the same value set in an even number of rows of a table's last
// column, which the digest's row hash once cancelled out (four rows marked deleted upstream in
// one run never reached the lake).
func TestCommitSeesEveryChange(t *testing.T) {
	ctx := context.Background()
	m := newMerchant(t, 3)
	m.sync(ctx, t, nil, nil, nil)
	lk := open(t, sqliteLake(t, t.TempDir()), nil)
	if _, err := lk.Commit(ctx, m.path, []string{m.name}); err != nil {
		t.Fatal(err)
	}
	db := memDuck(t)
	for _, change := range []string{
		`UPDATE wh.unpaid_transactions SET deleted_upstream_at = '2026-11-08 03:00:00+00' WHERE id IN (SELECT id FROM wh.unpaid_transactions ORDER BY id LIMIT 4)`,
		`UPDATE wh.customers SET deleted_upstream_at = '2026-11-09 03:00:00+00' WHERE id IN (SELECT id FROM wh.customers ORDER BY id LIMIT 2)`,
		`UPDATE wh.invoices SET status = 'PAID' WHERE id IN (SELECT id FROM wh.invoices WHERE status <> 'PAID' ORDER BY id LIMIT 2)`,
		`UPDATE wh.customers SET name = name || ' (2)' WHERE id = (SELECT max(id) FROM wh.customers)`,
	} {
		for _, q := range []string{fmt.Sprintf(`ATTACH '%s' AS wh`, m.path), change, `DETACH wh`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		res, err := lk.Commit(ctx, m.path, []string{m.name})
		if n, _ := res.Snapshots(); err != nil || n != 1 {
			t.Errorf("%s: %d snapshots, %v; want the changed table's one", change, n, err)
		}
		compare(t, lk, m, lake.Tables())
	}
}
