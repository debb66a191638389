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
