// Package warehouse keeps the billsync DuckDB file: raw API records in, typed
// tables, change history and sync state out, published by building a copy and
// renaming it over the previous file.
package warehouse

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// buildThreads is DuckDB's worker count on the build file. A sync shares its cores with HTTP,
// JSON decoding and (in tests and benchmarks) the simulator; a second DuckDB thread there
// mostly adds contention: measured with syncbench -scale 10 on 2 cores, list phase 28k
// records/s with one thread against 21k with two, at two thirds of the CPU time.
const buildThreads = "1"

// DefaultMemoryLimit bounds DuckDB's buffer pool on the build file unless BuildOptions says
// otherwise. Staging and merge intermediates beyond it spill to path+".tmp" instead of growing
// the process. Where a first sync of ~1M records (syncbench -scale 100 -lists-only -memtrace)
// keeps its memory at the peak: DuckDB's tracked memory at this limit (staged raw JSON in the
// loaders' temp tables, most of it), about 65 MB of Go heap (pages being decoded, the paging
// guards' hashes), about 50 MB of the binary's own pages and 30-60 MB of C memory DuckDB does not
// track: about 350 MB RSS. The price is spilling: the list phase took about a quarter more CPU
// than with 512MB before the Appender and allocator changes (which peaked at 1.0-1.2 GB).
const DefaultMemoryLimit = "192MB"

// openDB opens a DuckDB file with settings every billsync handle needs: no
// extension downloads (json, parquet and icu are linked in), UTC session time,
// and a usable home directory even when HOME is unset. A writable handle also
// gets the memory bound and spill directory of a build.
func openDB(path string, readOnly bool, memoryLimit string) (*sql.DB, error) {
	if err := releaseFreedMemory(); err != nil {
		return nil, fmt.Errorf("open duckdb %s: %w", path, err)
	}
	opts := url.Values{}
	opts.Set("autoinstall_known_extensions", "false")
	opts.Set("autoload_known_extensions", "false")
	// DuckDB switches jemalloc's background threads on or off at every open, process-wide; they
	// return freed pages to the kernel on time (allocator.go)
	opts.Set("allocator_background_threads", "true")
	if os.Getenv("HOME") == "" {
		opts.Set("home_directory", os.TempDir())
	}
	if readOnly {
		opts.Set("access_mode", "READ_ONLY")
	} else {
		if memoryLimit == "" {
			memoryLimit = DefaultMemoryLimit
		}
		opts.Set("memory_limit", memoryLimit)
		opts.Set("threads", buildThreads)
		opts.Set("temp_directory", path+".tmp")
		// no statement here needs rows in insertion order; keeping it costs memory
		opts.Set("preserve_insertion_order", "false")
		opts.Set("storage_compatibility_version", storageVersion) // for a file this creates
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

// OpenReadOnly opens the published warehouse for reading. A handle keeps seeing
// the file it opened: reopen it to see a newer publish.
func OpenReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("warehouse %s does not exist yet: run a sync first, or give the file with -db or BILLSYNC_DB (make demo writes data/demo.duckdb)", path)
	} else if err != nil {
		return nil, fmt.Errorf("warehouse %s: %w", path, err)
	}
	db, err := openDB(path, true, "")
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open warehouse %s read-only: %w", path, err)
	}
	return db, nil
}
