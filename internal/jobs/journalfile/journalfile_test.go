package journalfile_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/jobs/journalfile"
)

func openReader(t *testing.T) *sql.DB {
	t.Helper()
	db, err := duckfile.Open(filepath.Join(t.TempDir(), "reader.duckdb"), duckfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newJournal(t *testing.T) string {
	t.Helper()
	path := journalfile.DefaultPath(filepath.Join(t.TempDir(), "billsync.duckdb"))
	j, err := jobs.OpenJournal(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// columns describes credit_balance_reports as conn sees it after Views.
func columns(t *testing.T, db *sql.DB, attached bool) [][2]string {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := journalfile.Views(ctx, conn, attached); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, "SELECT column_name, column_type FROM (DESCRIBE credit_balance_reports)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var c [2]string
		if err := rows.Scan(&c[0], &c[1]); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The stand-in a reader gets without a journal has the journal's own columns, so a query that
// runs with one runs without it (and a journal migration that changes them fails here).
func TestEmptyViewsMatchTheJournal(t *testing.T) {
	path := newJournal(t)
	db := openReader(t)
	if err := journalfile.Attach(context.Background(), db, path); err != nil {
		t.Fatal(err)
	}
	real, empty := columns(t, db, true), columns(t, openReader(t), false)
	if len(real) == 0 || !reflect.DeepEqual(real, empty) {
		t.Errorf("empty stand-in columns\n%v\nwant the journal's\n%v", empty, real)
	}
}

func TestAttachErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bare := filepath.Join(dir, "bare.duckdb")
	db, err := duckfile.Open(bare, duckfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE other (x INT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, c := range []struct {
		name, path string
		want       error
	}{
		{"missing", filepath.Join(dir, "nope.duckdb"), fs.ErrNotExist},
		{"no tables", bare, journalfile.ErrNoTables},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := journalfile.Attach(ctx, openReader(t), c.path)
			if !errors.Is(err, c.want) {
				t.Errorf("Attach: %v, want %v", err, c.want)
			}
		})
	}
	t.Run("not a duckdb file", func(t *testing.T) {
		err := journalfile.Attach(ctx, openReader(t), filepath.Join("testdata", "not-duckdb.txt"))
		if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, journalfile.ErrNoTables) {
			t.Errorf("Attach: %v, want DuckDB's error", err)
		}
	})
	t.Run("a quote in the path", func(t *testing.T) {
		p := journalfile.DefaultPath(filepath.Join(t.TempDir(), "it's", "billsync.duckdb"))
		j, err := jobs.OpenJournal(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		if err := journalfile.Attach(ctx, openReader(t), p); err != nil {
			t.Errorf("Attach %s: %v", p, err)
		}
	})
}
