package lake_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/warehouse"
)

// TestHistoryColumnsAreTheWarehouses: the history tables the lake holds have the columns this
// billsync's warehouse has (its migrations), account first (sync_streams': its run's), so a
// migration that adds or changes one fails here until the lake's declaration follows.
func TestHistoryColumnsAreTheWarehouses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.duckdb")
	b, err := warehouse.StartBuild(ctx, path, warehouse.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Discard()
	duckType := map[entity.Type]string{entity.Text: "VARCHAR", entity.Int: "BIGINT", entity.Time: "TIMESTAMP WITH TIME ZONE",
		entity.JSON: "JSON", "INTEGER": "INTEGER", "BOOLEAN": "BOOLEAN"}
	data := warehouse.DataColumns()
	for _, name := range lake.Tables() {
		if _, ok := data[name]; ok {
			continue
		}
		var want []string
		for _, c := range lake.ColumnsOf(name) {
			if name == "sync_streams" && c.Name == "account" {
				continue // the warehouse's streams carry their run's id, the lake's its account
			}
			want = append(want, c.Name+" "+duckType[c.Type])
		}
		rows, err := b.DB().QueryContext(ctx, `SELECT column_name || ' ' || data_type FROM duckdb_columns()
			WHERE schema_name = 'main' AND table_name = $1 ORDER BY column_name = 'account' DESC, column_index`, name)
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			have = append(have, s)
		}
		rows.Close()
		if strings.Join(have, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s: the warehouse has\n  %s\nthe lake declares\n  %s", name, strings.Join(have, ", "), strings.Join(want, ", "))
		}
	}
}

// count is a query's one number on a warehouse file, opened read-only.
func count(t *testing.T, path, q string, args ...any) int64 {
	t.Helper()
	db, err := warehouse.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestMaterializeFromS3: an s3:// lake's snapshot (data files copied out of the bucket) is
// read back for one account into a warehouse file holding exactly that account's rows of
// every table, as many as its DuckDB file holds; every account when none is asked.
func TestMaterializeFromS3(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "test-access")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	ctx := context.Background()
	cfg := config.Lake{LakeAccess: config.LakeAccess{Root: "s3://lake/fleet", S3Endpoint: srv.URL, Catalog: "sqlite://" + filepath.Join(t.TempDir(), "catalog.db"), Namespace: "billsync"}}
	lk := open(t, cfg, nil)
	ms := []*merchant{newMerchant(t, 5), newMerchant(t, 6)}
	for _, m := range ms {
		m.sync(ctx, t, nil, nil, nil)
		if _, err := lk.Commit(ctx, m.path, []string{m.name}); err != nil {
			t.Fatal(err)
		}
	}
	one := filepath.Join(t.TempDir(), "one.duckdb")
	read, err := lk.Materialize(ctx, lake.At{}, ms[1].name, one, warehouse.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(read.Accounts(), ","); got != ms[0].name+","+ms[1].name {
		t.Errorf("accounts held %s", got)
	}
	all := filepath.Join(t.TempDir(), "all.duckdb")
	if _, err := lk.Materialize(ctx, lake.At{}, "", all, warehouse.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range read.Tables {
		q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE account = $1`, lake.SourceSQL(tr.Table))
		want := count(t, ms[1].path, q, ms[1].name)
		if tr.Rows != want || count(t, one, `SELECT count(*) FROM `+tr.Table) != want {
			t.Errorf("%s: read %d rows of %s, the file holds %d", tr.Table, tr.Rows, ms[1].name, want)
		}
		if tr.Table == "sync_streams" {
			continue // no account column in the warehouse
		}
		if n := count(t, one, fmt.Sprintf(`SELECT count(*) FROM %s WHERE account <> $1`, tr.Table), ms[1].name); n != 0 {
			t.Errorf("%s: %d rows of another account", tr.Table, n)
		}
		both := count(t, ms[0].path, q, ms[0].name) + want
		if n := count(t, all, `SELECT count(*) FROM `+tr.Table); n != both {
			t.Errorf("%s: every account read: %d rows, the files hold %d", tr.Table, n, both)
		}
	}
}

// TestReadPointRefused: a snapshot no table has, a time after now and a time before the first
// commit are refused with what was asked; nothing is written.
func TestReadPointRefused(t *testing.T) {
	ctx := context.Background()
	m := newMerchant(t, 7)
	m.sync(ctx, t, nil, nil, nil)
	lk := open(t, sqliteLake(t, t.TempDir()), nil)
	empty := filepath.Join(t.TempDir(), "x.duckdb")
	if _, err := lk.Materialize(ctx, lake.At{}, "", empty, warehouse.BuildOptions{}); err == nil || !strings.Contains(err.Error(), "no sync has committed to this lake") {
		t.Errorf("an empty lake: %v", err)
	}
	if _, err := lk.Commit(ctx, m.path, []string{m.name}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   lake.At
		want string
	}{
		{lake.At{Snapshot: 42}, "snapshot 42 is in none of the lake's tables"},
		{lake.At{Time: time.Now().Add(time.Hour)}, "is after now"},
		{lake.At{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}, "no table of the lake had a snapshot at 2020-01-01T00:00:00Z"},
	} {
		path := filepath.Join(t.TempDir(), "w.duckdb")
		_, err := lk.Materialize(ctx, tc.at, "", path, warehouse.BuildOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.at, err, tc.want)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%+v: a refused read left %s", tc.at, path)
		}
	}
}
