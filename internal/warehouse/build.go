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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/billsync/billsync/internal/sqlfile"
)

// Build is one sync's writable copy of the warehouse (path+".building"). Nothing
// it does is visible at path until Publish renames the copy into place.
type Build struct {
	path string // the published file
	work string // path + ".building"
	lock *os.File
	db   *sql.DB
	log  *slog.Logger

	memoryLimit string

	// Resumed reports that the work file came from an interrupted run.
	Resumed bool

	mu        sync.Mutex
	loaders   map[*Loader]struct{}
	done      bool
	stopTrace func()
}

var stateSQL = sqlfile.MustLoad(sqlFS, "queries/state.sql", "unfinished_runs", "find_unfinished_run", "insert_run", "finish_run", "stream_done", "delete_stream", "insert_stream", "get_cursor", "delete_cursor", "insert_cursor", "delete_credit_fetched", "insert_credit_fetched", "delete_conflicts", "insert_conflict")

// BuildOptions tune a build; the zero value is the default.
type BuildOptions struct {
	Log         *slog.Logger // nil: slog.Default()
	MemoryLimit string       // DuckDB's memory_limit on the build file, e.g. "512MB"; "" = DefaultMemoryLimit

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
	lock, err := acquireLock(path + ".lock")
	if err != nil {
		return nil, err
	}
	b := &Build{path: path, work: path + ".building", lock: lock, log: log, memoryLimit: opts.MemoryLimit,
		loaders: map[*Loader]struct{}{}}
	if err := b.open(ctx); err != nil {
		releaseLock(lock)
		return nil, err
	}
	if opts.MemoryTrace != nil {
		every := opts.MemoryTraceEvery
		if every <= 0 {
			every = 250 * time.Millisecond
		}
		b.stopTrace = b.traceMemory(every, opts.MemoryTrace)
	}
	return b, nil
}

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

// resumable opens a leftover work file when it holds an unfinished run. Any
// other leftover (corrupt, or a finished but unpublished run) is removed.
func (b *Build) resumable(ctx context.Context) (*sql.DB, bool) {
	if _, err := os.Stat(b.work); err != nil {
		return nil, false
	}
	db, err := openDB(b.work, false, b.memoryLimit)
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
	db, err := openDB(b.work, false, b.memoryLimit)
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
	odb, err := openDB(old, false, b.memoryLimit)
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
	db, err := openDB(b.work, false, b.memoryLimit)
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
		return b.abort(fmt.Errorf("publish: checkpoint %s: %w", b.work, err))
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
	return releaseLock(b.lock)
}

// Close stops without publishing and keeps the work file so the next
// StartBuild resumes it.
func (b *Build) Close() error {
	if err := b.finish(); err != nil {
		return err
	}
	err := b.db.Close()
	return errors.Join(err, releaseLock(b.lock))
}

// Discard stops without publishing and deletes the work file.
func (b *Build) Discard() error {
	if err := b.finish(); err != nil {
		return err
	}
	err := b.db.Close()
	removeWork(b.work)
	return errors.Join(err, releaseLock(b.lock))
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
	var errs []error
	for l := range b.loaders {
		errs = append(errs, l.close())
	}
	return errors.Join(errs...)
}

// abort releases what a failed publish still holds; the work file stays for a resume.
func (b *Build) abort(err error) error {
	b.db.Close()
	return errors.Join(err, releaseLock(b.lock))
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

// acquireLock takes a non-blocking flock and writes our pid into the file so a
// second syncer can say who holds it.
func acquireLock(p string) (*os.File, error) {
	for {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open lock %s: %w", p, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(p)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("sync already running: %s held by pid %s", p, pidText(holder))
			}
			return nil, fmt.Errorf("lock %s: %w", p, err)
		}
		// The holder before us removes the file when it releases (no lock file is left
		// behind). If we locked a file that was removed meanwhile, the lock guards nothing:
		// try again with the file now at the path.
		if sameFile(f, p) {
			if err := f.Truncate(0); err == nil {
				f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return f, nil
		}
		f.Close()
	}
}

// sameFile says whether the open f is still the file at path p.
func sameFile(f *os.File, p string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(p)
	return err == nil && os.SameFile(fi, pi)
}

func pidText(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "unknown"
	}
	return s
}

func releaseLock(f *os.File) error {
	if f == nil {
		return nil
	}
	// Removed while still locked, so a process that opened the old file retries (acquireLock).
	os.Remove(f.Name())
	return f.Close() // closing the descriptor releases the flock
}
