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

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Options tune Open; the zero value opens the file writable with the common settings only.
type Options struct {
	// ReadOnly opens the file with access_mode READ_ONLY: many readers may hold it, no writer.
	ReadOnly bool
	// Settings are further DuckDB configuration options of the database instance, by DuckDB's
	// names (memory_limit, threads, temp_directory, ...).
	Settings map[string]string
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
	conn, err := duckdb.NewConnector(path+"?"+opts.Encode(), func(ex driver.ExecerContext) error {
		_, err := ex.ExecContext(context.Background(), "SET TimeZone = 'UTC'", nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open duckdb %s: %w", path, err)
	}
	return sql.OpenDB(conn), nil
}

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
