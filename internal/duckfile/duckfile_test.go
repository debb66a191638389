package duckfile_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/duckfile"
)

func TestOpenAppliesSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.duckdb")
	db, err := duckfile.Open(path, duckfile.Options{Settings: map[string]string{"threads": "1", "memory_limit": "64MB",
		// a caller cannot turn downloads back on: the common settings win
		"autoinstall_known_extensions": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct{ setting, want string }{
		{"threads", "1"},
		{"memory_limit", "61.0 MiB"},
		{"TimeZone", "UTC"},
		{"autoinstall_known_extensions", "false"},
		{"autoload_known_extensions", "false"},
		{"access_mode", "automatic"},
	} {
		var got string
		if err := db.QueryRow("SELECT current_setting('" + c.setting + "')::VARCHAR").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s = %q, want %q", c.setting, got, c.want)
		}
	}
}

func TestOpenReadOnlyRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.duckdb")
	db, err := duckfile.Open(path, duckfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (x INT); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := duckfile.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var n int
	if err := ro.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("read: %d, %v", n, err)
	}
	if _, err := ro.Exec("INSERT INTO t VALUES (2)"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("write on a read-only handle: %v", err)
	}
}

func TestInTx(t *testing.T) {
	db, err := duckfile.Open(filepath.Join(t.TempDir(), "a.duckdb"), duckfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Exec("CREATE TABLE t (x INT)"); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = duckfile.InTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.Exec("INSERT INTO t VALUES (1)"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if err := duckfile.InTx(ctx, db, func(tx *sql.Tx) error {
		_, err := tx.Exec("INSERT INTO t VALUES (2)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := db.QueryRow("SELECT string_agg(x::VARCHAR, ',') FROM t").Scan(&got); err != nil || got != "2" {
		t.Errorf("rows after a failed and a committed transaction: %q (%v), want only the committed 2", got, err)
	}
}

func TestLockNamesTheHolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a.duckdb")
	l, err := duckfile.Acquire(file)
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != file+".lock" {
		t.Errorf("lock path %s, want %s.lock", l.Path(), file)
	}
	_, err = duckfile.Acquire(file)
	var held *duckfile.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second acquire: %v, want a HeldError", err)
	}
	want := fmt.Sprintf("%s.lock held by pid %d", file, os.Getpid())
	if err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file + ".lock"); !os.IsNotExist(err) {
		t.Errorf("lock file left behind: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second release: %v", err)
	}
	l2, err := duckfile.Acquire(file)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	l2.Release()
}

// A lock file a holder has not written its pid into yet still names the lock.
func TestLockHolderUnknown(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a.duckdb")
	l, err := duckfile.Acquire(file)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := os.Truncate(file+".lock", 0); err != nil {
		t.Fatal(err)
	}
	_, err = duckfile.Acquire(file)
	if want := file + ".lock held by pid unknown"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// rowGroups is the rows of each row group of table, in order, after a checkpoint.
func rowGroups(t *testing.T, db *sql.DB, table string) []int {
	t.Helper()
	if _, err := db.Exec("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT row_group_id, sum(count) FROM pragma_storage_info('` + table + `')
		WHERE column_id = 0 AND segment_type <> 'VALIDITY' GROUP BY ALL ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var id, n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	return got
}

func TestOpenWritesRowGroupSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wh.duckdb.building")
	open := func() *sql.DB {
		db, err := duckfile.Open(path, duckfile.Options{RowGroupSize: 4096,
			Settings: map[string]string{"storage_compatibility_version": "v1.2.0"}})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	db.SetMaxOpenConns(3) // every connection of the handle works in the file
	for i := range 3 {
		if _, err := db.Exec(fmt.Sprintf("CREATE TABLE t%d AS SELECT range AS x FROM range(10000)", i)); err != nil {
			t.Fatal(err)
		}
	}
	var name, version string
	if err := db.QueryRow(`SELECT database_name, tags['storage_version'] FROM duckdb_databases()
		WHERE database_name = current_database()`).Scan(&name, &version); err != nil {
		t.Fatal(err)
	}
	if name != "wh" || version != "v1.2.0+" {
		t.Errorf("current database %q in storage %q, want what a plain open gives: wh, v1.2.0+", name, version)
	}
	if got := rowGroups(t, db, "t0"); fmt.Sprint(got) != "[4096 4096 1808]" {
		t.Errorf("row groups %v, want [4096 4096 1808]", got)
	}
	db.Close()

	// a later open writes the same size (a plain open would merge them into one row group)
	db = open()
	defer db.Close()
	if _, err := db.Exec("INSERT INTO t0 SELECT range FROM range(5000)"); err != nil {
		t.Fatal(err)
	}
	got := rowGroups(t, db, "t0")
	sum := 0
	for i, n := range got {
		sum += n
		if n > 4096 {
			t.Errorf("row group %d has %d rows: %v", i, n, got)
		}
	}
	if sum != 15000 {
		t.Errorf("rows %d, want 15000", sum)
	}
	var tables int
	if err := db.QueryRow("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()").Scan(&tables); err != nil || tables != 3 {
		t.Errorf("tables in the file: %d, %v", tables, err)
	}
}

func TestOpenRowGroupSizeNotReadOnly(t *testing.T) {
	_, err := duckfile.Open(filepath.Join(t.TempDir(), "a.duckdb"), duckfile.Options{ReadOnly: true, RowGroupSize: 4096})
	if err == nil {
		t.Error("a read-only handle with a row group size opened")
	}
}
