// Package duckfile is what every DuckDB file billsync owns (the warehouse, the job journal) needs
// from DuckDB and the operating system: an open with the settings no billsync handle goes
// without, an exclusive lock that says who holds it, and a transaction helper.
package duckfile

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Options tune Open; the zero value opens the file writable with the common settings only.
type Options struct {
	// ReadOnly opens the file with access_mode READ_ONLY: many readers may hold it, no writer.
	ReadOnly bool
	// Settings are further DuckDB configuration options of the database instance, by DuckDB's
	// names (memory_limit, threads, temp_directory, ...).
	Settings map[string]string
	// RowGroupSize, when set, is the rows per row group that writes to the file use (a multiple
	// of 2048). DuckDB takes it only as an option of ATTACH and does not keep it in the file: a
	// handle that opens the file plainly writes DuckDB's default (122,880) and its checkpoints
	// merge smaller row groups it touches back into that size. So the file is attached, with
	// this size, to an in-memory instance, under the name a plain open would give it, and is
	// every connection's default catalog: SQL sees the same database either way.
	RowGroupSize int
}

// Open opens the DuckDB file at path (creating it unless ReadOnly) with the settings every
// billsync handle needs: no extension downloads (json, parquet and icu are linked in), UTC
// session time, and a usable home directory even when HOME is unset (DuckDB fails without one).
// Nothing touches the file until the handle's first use.
func Open(path string, o Options) (*sql.DB, error) {
	if err := releaseFreedMemory(); err != nil {
		return nil, fmt.Errorf("open duckdb %s: %w", path, err)
	}
	opts := url.Values{}
	for k, v := range o.Settings {
		opts.Set(k, v)
	}
	opts.Set("autoinstall_known_extensions", "false")
	opts.Set("autoload_known_extensions", "false")
	// DuckDB switches jemalloc's background threads on or off at every open, process-wide; they
	// return freed pages to the kernel on time (allocator.go)
	opts.Set("allocator_background_threads", "true")
	if os.Getenv("HOME") == "" {
		opts.Set("home_directory", os.TempDir())
	}
	if o.ReadOnly {
		opts.Set("access_mode", "READ_ONLY")
	}
	dsn, init := path, []string{"SET TimeZone = 'UTC'"}
	if o.RowGroupSize > 0 {
		if o.ReadOnly {
			return nil, fmt.Errorf("open duckdb %s: a row group size is for writing, not for a read-only handle", path)
		}
		dsn = "" // in memory, its catalog named "memory"
		name := catalogName(path)
		init = append(init,
			fmt.Sprintf("ATTACH IF NOT EXISTS %s AS %s (ROW_GROUP_SIZE %d)", QuoteLiteral(path), QuoteIdent(name), o.RowGroupSize),
			"USE "+QuoteIdent(name))
	}
	conn, err := duckdb.NewConnector(dsn+"?"+opts.Encode(), func(ex driver.ExecerContext) error {
		for _, stmt := range init {
			if _, err := ex.ExecContext(context.Background(), stmt, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open duckdb %s: %w", path, err)
	}
	return sql.OpenDB(conn), nil
}

// catalogName is the name DuckDB gives a database file it opens: the file name's first part
// between dots.
func catalogName(path string) string {
	for _, part := range strings.Split(filepath.Base(path), ".") {
		switch part {
		case "":
		case "memory", "system", "temp", "main": // taken in the instance it is attached to
			return "bs_" + part
		default:
			return part
		}
	}
	return "bs_main"
}

// QuoteLiteral and QuoteIdent quote a string literal (a file path) and an identifier (a catalog
// or table name) for the statements that cannot take parameters (ATTACH, COPY, SET, DDL).
func QuoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
func QuoteIdent(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// OpenReadOnly is Open with ReadOnly set.
func OpenReadOnly(path string) (*sql.DB, error) {
	return Open(path, Options{ReadOnly: true})
}

// InTx runs fn in a transaction on db and commits it; an error from fn rolls it back.
func InTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// RetryLocked runs open (an Open and the handle's first use) again while DuckDB refuses the file
// because another process holds it: a reader such as syncer status or a report holds a journal
// for milliseconds, and a writer must wait that out rather than fail. It gives up after about
// three seconds with open's error.
func RetryLocked(ctx context.Context, open func() error) error {
	wait := 20 * time.Millisecond
	for deadline := time.Now().Add(3 * time.Second); ; wait = min(2*wait, 500*time.Millisecond) {
		err := open()
		if err == nil || !IsLockConflict(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// IsLockConflict says whether err is DuckDB refusing a file another process holds.
func IsLockConflict(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Could not set lock on file")
}
