package warehouse

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/sqlfile"
	"github.com/billsync/billsync/internal/syncdata"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

func TestStorageAtLeast(t *testing.T) {
	for _, c := range []struct {
		tag  string
		want bool
	}{
		{"v1.2.0+", true}, {"v1.2.0", true}, {"v1.3.1+", true}, {"v2.0.0", true},
		{"v1.0.0+", false}, {"v0.10.2", false}, {"v1.1.9+", false}, {"", false}, {"latest", false},
	} {
		if got := storageAtLeast(c.tag, storageVersion); got != c.want {
			t.Errorf("storageAtLeast(%q, %q) = %v, want %v", c.tag, storageVersion, got, c.want)
		}
	}
}

// oldWarehouse writes a warehouse as billsync made it before migration 0003, in DuckDB's
// default (pre-1.2) storage: one customer and one webhook delivery with its payload column. Its
// migrations are those of that time (testdata/old_migrations), macros included.
func oldWarehouse(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	conn, err := duckdb.NewConnector(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	if err := sqlfile.Migrate(ctx, db, os.DirFS("testdata"), "old_migrations"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO customers (account, id, email, raw, first_seen_run, last_seen_run)
		 VALUES ('acct', 'c1', 'a@example.com', '{"id":"c1","email":"a@example.com"}', 1, 1)`,
		`INSERT INTO webhook_deliveries (account, id, event_type, event_data, payload, raw, first_seen_run, last_seen_run)
		 VALUES ('acct', 'w1', 'payment.received', '{"amount":5}', '{"event":"payment.received","data":{"amount":5}}',
		         '{"id":"w1"}', 1, 1)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	v := storageOf(t, db)
	if storageAtLeast(v, storageVersion) {
		t.Fatalf("test setup: old warehouse already has storage %s", v)
	}
}

func storageOf(t *testing.T, db *sql.DB) string {
	t.Helper()
	v, err := fileStorageVersion(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A warehouse from before ZSTD is copied once into the current storage version, keeps every
// row, and comes out with raw compressed by ZSTD and without the dropped payload column.
func TestOldStorageIsUpgraded(t *testing.T) {
	ctx := context.Background()
	path := newPath(t)
	oldWarehouse(t, path)

	b := startBuild(t, path)
	if v := storageOf(t, b.DB()); !storageAtLeast(v, storageVersion) {
		t.Fatalf("work file storage %s, want at least %s", v, storageVersion)
	}
	run := startRun(t, b, "acct")
	load(t, b, entity.Customers, run, t0, false, `{"id":"c2","email":"b@example.com"}`)
	if err := b.finishRun(ctx, run.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx); err != nil {
		t.Fatal(err)
	}

	db, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v := storageOf(t, db); !storageAtLeast(v, storageVersion) {
		t.Fatalf("published storage %s, want at least %s", v, storageVersion)
	}
	if got := queryString(t, db, `SELECT string_agg(id || '=' || email || ' ' || raw::VARCHAR, '; ' ORDER BY id) FROM customers`); got !=
		`c1=a@example.com {"id":"c1","email":"a@example.com"}; c2=b@example.com {"id":"c2","email":"b@example.com"}` {
		t.Errorf("customers after upgrade: %s", got)
	}
	if got := queryString(t, db, `SELECT id || ' ' || event_type || ' ' || event_data::VARCHAR FROM webhook_deliveries`); got != `w1 payment.received {"amount":5}` {
		t.Errorf("webhook after upgrade: %s", got)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM duckdb_columns() WHERE table_name = 'webhook_deliveries' AND column_name = 'payload'`); n != 0 {
		t.Error("webhook_deliveries still has the payload column")
	}
	if got := queryString(t, db, `SELECT string_agg(DISTINCT compression, ',') FROM pragma_storage_info('customers') WHERE column_name = 'raw' AND segment_type <> 'VALIDITY'`); got != "ZSTD" {
		t.Errorf("customers.raw compression %q, want ZSTD", got)
	}
	migrations, err := sqlfile.Migrations(sqlFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db, `SELECT max(version) FROM schema_migrations`); n != int64(migrations[len(migrations)-1].Version) {
		t.Errorf("schema version %d, want %d (every embedded migration applied)", n, migrations[len(migrations)-1].Version)
	}
	// the old file's macros are replaced by today's
	if v := queryString(t, db, `SELECT billsync_macros_version()`); v != MacrosVersion {
		t.Errorf("macros version %s, want %s", v, MacrosVersion)
	}
	if got := queryString(t, db, `SELECT macro_definition FROM duckdb_functions() WHERE function_name = 'bs_ts'`); !strings.Contains(got, "suffix(s, 'Z')") {
		t.Errorf("bs_ts is still the old file's: %s", got)
	}
	// migrated before the copy, so no rebuilt table left its old blocks behind
	if free, total := queryInt(t, db, `SELECT free_blocks FROM pragma_database_size()`),
		queryInt(t, db, `SELECT total_blocks FROM pragma_database_size()`); free*4 > total {
		t.Errorf("%d of %d blocks free after the upgrade", free, total)
	}
	if _, err := os.Stat(path + ".building.old"); !os.IsNotExist(err) {
		t.Errorf("the migrated copy of the old file was left behind: %v", err)
	}
}

// A new warehouse is written in the current storage version from its first publish.
func TestNewWarehouseStorage(t *testing.T) {
	path := newPath(t)
	publishOne(t, path, `{"id":"a"}`)
	db, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v := storageOf(t, db); !storageAtLeast(v, storageVersion) {
		t.Fatalf("storage %s, want at least %s", v, storageVersion)
	}
	if got := queryString(t, db, `SELECT string_agg(DISTINCT compression, ',') FROM pragma_storage_info('customers') WHERE column_name = 'raw' AND segment_type <> 'VALIDITY'`); got != "ZSTD" {
		t.Errorf("customers.raw compression %q, want ZSTD", got)
	}
}
