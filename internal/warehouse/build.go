package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/sqlfile"
)

// Build is one sync's writable copy of the warehouse (path+".building"). Nothing
// it does is visible at path until Publish renames the copy into place.
type Build struct {
	path string // the published file
	work string // path + ".building"
	lock *duckfile.Lock
	db   *sql.DB
	log  *slog.Logger

	memoryLimit  string
	keepMemory   string
	rowGroupSize int
	// mergeMem lets a merge that ran out of DuckDB's memory beside others run again alone:
	// merges hold it shared, a retry exclusively.
	mergeMem            sync.RWMutex
	listBatch           int
	listBatchSet        bool // BuildOptions.ListBatch was given
	fanoutBatchBytes    int64
	fanoutBatchRequests int
	fanoutBatchAge      time.Duration

	// Resumed reports that the work file came from an interrupted run.
	Resumed bool

	mu        sync.Mutex
	loaders   map[*loader]struct{}
	sink      *Sink // the open sink, if any: a build has one writer
	done      bool
	stopTrace func()
	stopTrim  func()

	// firstPaths remembers, per table, account and run, whether the run is the account's first
	// sync of the table (merge/common.sql, first_path): a run's own merges cannot change the
	// answer, so it is asked once, not once per batch. Guarded by mu.
	firstPaths map[firstPathKey]bool
	// directIDs are the id hashes the direct path keeps per table, account and run (direct.go).
	// Guarded by mu.
	directIDs map[firstPathKey]idHashes
}

var stateSQL = sqlfile.MustLoad(sqlFS, "queries/state.sql", "unfinished_runs", "find_unfinished_run", "set_run_clock", "set_run_failure", "get_run_failure", "future_credit_reads", "future_cursors", "ahead_clock_seen", "last_read", "insert_run", "finish_run", "stream_done", "delete_stream", "insert_stream", "get_cursor", "delete_cursor", "insert_cursor", "delete_conflicts", "insert_conflict", "newest_created", "insert_flag", "flag_service_clock")

// BuildOptions tune a build; the zero value is the default.
type BuildOptions struct {
	// Build are the settings (BILLSYNC_MEMORY_LIMIT: DuckDB's memory_limit on the build file, e.g.
	// "512MB"; "" = config.DefaultMemoryLimit).
	config.Build
	Log *slog.Logger // nil: slog.Default()
	// KeepMemory, e.g. "160MB", is how much of its buffer memory the build's DuckDB keeps for
	// reuse instead of handing it back to the kernel ("" = none, the default): DuckDB's block
	// allocator, freed when the build closes. For benchmarks (syncbench -keep-memory): it trades
	// about its size in peak RSS for fewer page faults (docs/performance.md, "Tried and not kept").
	KeepMemory string
	// RowGroupSize is the rows per row group the build writes, a multiple of 2048
	// (0 = DefaultRowGroupSize).
	RowGroupSize int
	// ListBatch is how many records a list stages before merging them (0 = the row group size
	// on the account's first sync of the table, more on later ones: sink.go, listBatch).
	ListBatch int
	// FanoutBatchBytes bounds the responses a fan-out batch holds in memory before they are
	// merged (0 = DefaultFanoutBatchBytes).
	FanoutBatchBytes int64
	// FanoutBatchRequests and FanoutBatchAge close a fan-out batch (0 = DefaultFanoutBatchRequests,
	// DefaultFanoutBatchAge).
	FanoutBatchRequests int
	FanoutBatchAge      time.Duration

	// MemoryTrace, when set, is called every MemoryTraceEvery (default 250 ms) with DuckDB's
	// memory until the build closes: a diagnostic for benchmarks.
	MemoryTrace      func(MemorySample)
	MemoryTraceEvery time.Duration
}

// StartBuild locks path, then resumes an interrupted build or starts a new one
// from a copy of the published file, and brings the schema up to date.
func StartBuild(ctx context.Context, path string, opts BuildOptions) (*Build, error) {
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	lock, err := duckfile.Acquire(path)
	var held *duckfile.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("sync already running: %w", err)
	}
	if err != nil {
		return nil, err
	}
	b := &Build{path: path, work: path + ".building", lock: lock, log: log, memoryLimit: opts.MemoryLimit, keepMemory: opts.KeepMemory,
		rowGroupSize: opts.RowGroupSize, listBatch: opts.ListBatch, fanoutBatchBytes: opts.FanoutBatchBytes,
		loaders: map[*loader]struct{}{}, firstPaths: map[firstPathKey]bool{},
		directIDs: map[firstPathKey]idHashes{}}
	if b.memoryLimit == "" {
		b.memoryLimit = config.DefaultMemoryLimit
	}
	if b.rowGroupSize <= 0 {
		b.rowGroupSize = DefaultRowGroupSize
	}
	if b.rowGroupSize%2048 != 0 {
		lock.Release()
		return nil, fmt.Errorf("row group size %d is not a multiple of 2048", b.rowGroupSize)
	}
	b.listBatchSet = b.listBatch > 0
	if !b.listBatchSet {
		b.listBatch = b.rowGroupSize
	}
	if b.fanoutBatchBytes <= 0 {
		b.fanoutBatchBytes = DefaultFanoutBatchBytes
	}
	b.fanoutBatchRequests, b.fanoutBatchAge = opts.FanoutBatchRequests, opts.FanoutBatchAge
	if b.fanoutBatchRequests <= 0 {
		b.fanoutBatchRequests = DefaultFanoutBatchRequests
	}
	if b.fanoutBatchAge <= 0 {
		b.fanoutBatchAge = DefaultFanoutBatchAge
	}
	if err := b.open(ctx); err != nil {
		lock.Release()
		return nil, err
	}
	if opts.MemoryTrace != nil {
		every := opts.MemoryTraceEvery
		if every <= 0 {
			every = 250 * time.Millisecond
		}
		b.stopTrace = b.traceMemory(every, opts.MemoryTrace)
	}
	// DuckDB's plain mallocs leave free memory in glibc's arenas; hand it back while the build is open.
	b.stopTrim = duckfile.ReturnFreedCMemory(freedCMemoryEvery)
	return b, nil
}

// freedCMemoryEvery is how often an open build hands malloc's free memory back
// (duckfile.ReturnFreedCMemory).
const freedCMemoryEvery = 250 * time.Millisecond

func (b *Build) open(ctx context.Context) error {
	if db, ok := b.resumable(ctx); ok {
		b.db, b.Resumed = db, true
		b.log.Info("resuming interrupted build", "file", b.work)
	} else if err := b.startWorkFile(ctx); err != nil {
		return err
	}
	if err := migrate(ctx, b.db); err != nil {
		b.db.Close()
		return fmt.Errorf("migrate %s: %w", b.work, err)
	}
	return nil
}

// openWritable opens a file of the build with its settings.
func (b *Build) openWritable(path string) (*sql.DB, error) {
	return openDB(path, false, b.memoryLimit, b.keepMemory, b.rowGroupSize)
}

// resumable opens a leftover work file when it holds an unfinished run. Any
// other leftover (corrupt, or a finished but unpublished run) is removed.
func (b *Build) resumable(ctx context.Context) (*sql.DB, bool) {
	if _, err := os.Stat(b.work); err != nil {
		return nil, false
	}
	db, err := b.openWritable(b.work)
	if err == nil {
		var n int64
		err = db.QueryRowContext(ctx, stateSQL.Get("unfinished_runs")).Scan(&n)
		if err == nil && n == 0 {
			err = errors.New("no unfinished run")
		}
		if err == nil {
			err = b.currentStorage(ctx, db)
		}
		if err == nil {
			return db, true
		}
		db.Close()
	}
	b.log.Warn("discarding leftover build file", "file", b.work, "reason", err.Error())
	removeWork(b.work)
	return nil, false
}

// currentStorage fails for a work file in a storage version older than new files get: an
// interrupted run from before an upgrade starts over rather than resume in the old format.
func (b *Build) currentStorage(ctx context.Context, db *sql.DB) error {
	v, err := fileStorageVersion(ctx, db)
	if err != nil {
		return err
	}
	if !storageAtLeast(v, storageVersion) {
		return fmt.Errorf("storage version %s is older than %s", v, storageVersion)
	}
	return nil
}

// startWorkFile opens a new work file: a byte copy of the published file, or, when that file
// is in an older storage version, a new file the published contents are copied into (once:
// the published result is then in the current version).
func (b *Build) startWorkFile(ctx context.Context) error {
	removeWork(b.work)
	if _, err := os.Stat(b.path); err == nil {
		v, err := publishedStorage(ctx, b.path)
		if err != nil {
			return fmt.Errorf("read published warehouse: %w", err)
		}
		if !storageAtLeast(v, storageVersion) {
			b.log.Info("copying warehouse into the current storage version", "file", b.path, "from", v, "to", storageVersion)
			return b.upgradeWorkFile(ctx)
		}
	}
	if err := copyFile(b.path, b.work); err != nil {
		return err
	}
	db, err := b.openWritable(b.work)
	if err != nil {
		return err
	}
	b.db = db
	return nil
}

// upgradeWorkFile migrates a byte copy of the published file in its old storage version, then
// copies that into a new work file. Migrating after the copy would work too, but the tables
// migrations rebuild would leave the new file with the old tables' blocks free and unused.
func (b *Build) upgradeWorkFile(ctx context.Context) error {
	old := b.work + ".old"
	defer removeWork(old)
	removeWork(old)
	if err := copyFile(b.path, old); err != nil {
		return err
	}
	odb, err := b.openWritable(old)
	if err != nil {
		return err
	}
	err = migrate(ctx, odb)
	if cerr := odb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("migrate %s: %w", old, err)
	}
	db, err := b.openWritable(b.work)
	if err != nil {
		return err
	}
	if err := copyIntoNewStorage(ctx, db, old); err != nil {
		db.Close()
		removeWork(b.work)
		return fmt.Errorf("upgrade storage of %s: %w", b.path, err)
	}
	b.db = db
	return nil
}

// copyFile copies src to dst and fsyncs it; a missing src copies nothing (DuckDB then creates
// dst).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("copy published warehouse: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create build file: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("fsync %s: %w", dst, err)
	}
	return out.Close()
}

// removeWork deletes a work file with its WAL and spill directory.
func removeWork(work string) {
	for _, p := range []string{work, work + ".wal"} {
		os.Remove(p)
	}
	os.RemoveAll(work + ".tmp")
}

// DB is the work file's handle, for reads and for callers' own tables.
func (b *Build) DB() *sql.DB { return b.db }

// Publish makes the build the published warehouse: it checkpoints and closes
// the work file, fsyncs it, renames it over the published path, fsyncs the
// directory and releases the lock. Readers holding the old file keep it.
func (b *Build) Publish(ctx context.Context) error {
	if err := b.finish(); err != nil {
		return err
	}
	if _, err := b.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return b.abort(fmt.Errorf("publish: checkpoint %s: %w", b.work, b.explainMemory(err)))
	}
	if err := b.db.Close(); err != nil {
		return b.abort(fmt.Errorf("publish: close %s: %w", b.work, err))
	}
	if err := syncFile(b.work); err != nil {
		return b.abort(fmt.Errorf("publish: %w", err))
	}
	if err := os.Rename(b.work, b.path); err != nil {
		return b.abort(fmt.Errorf("publish: rename %s: %w", b.work, err))
	}
	if err := syncFile(filepath.Dir(b.path)); err != nil {
		return b.abort(fmt.Errorf("publish: %w", err))
	}
	os.Remove(b.work + ".wal") // empty after a clean close; never valid for the renamed file
	b.log.Info("published warehouse", "file", b.path)
	return b.lock.Release()
}

// Close stops without publishing and keeps the work file so the next
// StartBuild resumes it.
func (b *Build) Close() error {
	if err := b.finish(); err != nil {
		return err
	}
	err := b.db.Close()
	return errors.Join(err, b.lock.Release())
}

// Discard stops without publishing and deletes the work file.
func (b *Build) Discard() error {
	if err := b.finish(); err != nil {
		return err
	}
	err := b.db.Close()
	removeWork(b.work)
	return errors.Join(err, b.lock.Release())
}

// finish closes open loaders (dropping their staging) and marks the build done.
func (b *Build) finish() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return errors.New("warehouse build already closed")
	}
	b.done = true
	if b.stopTrace != nil {
		b.stopTrace()
	}
	b.stopTrim()
	var errs []error
	for l := range b.loaders {
		errs = append(errs, l.close())
	}
	return errors.Join(errs...)
}

// abort releases what a failed publish still holds; the work file stays for a resume.
func (b *Build) abort(err error) error {
	b.db.Close()
	return errors.Join(err, b.lock.Release())
}

func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", p, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", p, err)
	}
	return nil
}
