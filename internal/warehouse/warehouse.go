// Package warehouse keeps the billsync DuckDB file: raw API records in, typed
// tables, change history and sync state out, published by building a copy and
// renaming it over the previous file.
//
// A sync writes a Build only through its Sink (sink.go), which owns DuckDB's write
// rules: when records are merged and in what batches, how many merges run at once,
// one writer per table, when rows are marked deleted upstream. The entities are the
// files of merge/ (entity.go). It knows nothing of the API client: the caller passes
// records as raw JSON and the run's observation time.
package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/billsync/billsync/internal/duckfile"
)

// buildThreads is DuckDB's worker count on the build file. A sync shares its cores with HTTP,
// JSON decoding and (in tests and benchmarks) the simulator; a second DuckDB thread there
// mostly adds contention (docs/architecture.md, "One writer per table").
const buildThreads = "1"

// DefaultRowGroupSize is the rows per row group a build writes, and so the records of a list
// batch (DefaultListBatch). DuckDB's own 122,880 makes one batch of a wide list (webhook
// history) several times the default memory limit in DuckDB while it merges, and the merge spills;
// a smaller batch that is still a whole row group fits, and no checkpoint compresses a
// part-filled row group again. The figures are in docs/architecture.md ("One writer per table").
const DefaultRowGroupSize = 16_384

// openDB opens a warehouse file (duckfile.Open: no extension downloads, UTC). A writable handle
// also gets the memory bound, thread count, spill directory and row group size of a build
// (0 = DefaultRowGroupSize): every open that writes must give the size, since DuckDB does not keep
// it in the file. A reader needs none of them. keepMemory, when set, is how much buffer memory
// the build's DuckDB keeps for reuse (BuildOptions.KeepMemory).
func openDB(path string, readOnly bool, memoryLimit, keepMemory string, rowGroupSize int) (*sql.DB, error) {
	if readOnly {
		return duckfile.OpenReadOnly(path)
	}
	if rowGroupSize <= 0 {
		rowGroupSize = DefaultRowGroupSize
	}
	settings := map[string]string{
		"memory_limit":   memoryLimit,
		"threads":        buildThreads,
		"temp_directory": path + ".tmp",
		// no statement here needs rows in insertion order; keeping it costs memory
		"preserve_insertion_order":      "false",
		"storage_compatibility_version": storageVersion, // for a file this creates
	}
	if keepMemory != "" {
		// DuckDB's block allocator: buffer blocks come from a region it never hands back
		// while the database is open (closing the build frees it)
		settings["block_allocator_memory"] = keepMemory
	}
	return duckfile.Open(path, duckfile.Options{RowGroupSize: rowGroupSize, Settings: settings})
}

// OpenReadOnly opens the published warehouse for reading. A handle keeps seeing
// the file it opened: reopen it to see a newer publish.
func OpenReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("warehouse %s does not exist yet: run a sync first, or give the file with -db or BILLSYNC_DB (make demo writes data/demo.duckdb)", path)
	} else if err != nil {
		return nil, fmt.Errorf("warehouse %s: %w", path, err)
	}
	db, err := openDB(path, true, "", "", 0)
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open warehouse %s read-only: %w", path, err)
	}
	return db, nil
}
