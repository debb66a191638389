package jobs

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/billsync/billsync/internal/sqlfile"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// JournalFile is the journal's file name beside the warehouse.
const JournalFile = "billsync-jobs.duckdb"

// DefaultJournalPath is the journal stored beside the warehouse file.
func DefaultJournalPath(warehousePath string) string {
	return filepath.Join(filepath.Dir(warehousePath), JournalFile)
}

// Journal is the open job journal. It holds an exclusive flock on path+".lock" while open, so two job
// processes never write it at once.
type Journal struct {
	path string
	db   *sql.DB
	lock *os.File
}

// OpenJournal locks, opens (creating it if needed) and migrates the journal at path.
func OpenJournal(ctx context.Context, path string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("job journal directory: %w", err)
	}
	lock, err := acquireLock(path + ".lock")
	if err != nil {
		return nil, err
	}
	db, err := openDuckDB(path, false)
	if err == nil {
		err = migrate(ctx, db)
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		releaseLock(lock)
		return nil, fmt.Errorf("job journal %s: %w", path, err)
	}
	return &Journal{path: path, db: db, lock: lock}, nil
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// DB is the journal's handle, for reading it.
func (j *Journal) DB() *sql.DB { return j.db }

// Close checkpoints and closes the journal and releases the lock.
func (j *Journal) Close() error {
	_, cerr := j.db.Exec("CHECKPOINT")
	err := j.db.Close()
	return errors.Join(cerr, err, releaseLock(j.lock))
}

// openDuckDB opens a DuckDB file with no extension downloads and UTC session time.
func openDuckDB(path string, readOnly bool) (*sql.DB, error) {
	opts := url.Values{}
	opts.Set("autoinstall_known_extensions", "false")
	opts.Set("autoload_known_extensions", "false")
	if os.Getenv("HOME") == "" {
		opts.Set("home_directory", os.TempDir())
	}
	if readOnly {
		opts.Set("access_mode", "READ_ONLY")
	}
	conn, err := duckdb.NewConnector(path+"?"+opts.Encode(), func(ex driver.ExecerContext) error {
		_, err := ex.ExecContext(context.Background(), "SET TimeZone = 'UTC'", nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open duckdb %s: %w", path, err)
	}
	db := sql.OpenDB(conn)
	// One connection: the journal is written by one goroutine, and a single connection keeps
	// every statement in commit order.
	db.SetMaxOpenConns(1)
	return db, nil
}

// migrate applies the journal's embedded migrations not yet recorded in it.
func migrate(ctx context.Context, db *sql.DB) error {
	return sqlfile.Migrate(ctx, db, sqlFS, "migrations")
}

func inTx(ctx context.Context, db *sql.DB, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// acquireLock takes a non-blocking flock and records our pid so a second process can say who holds it.
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
				pid := strings.TrimSpace(string(holder))
				if pid == "" {
					pid = "unknown"
				}
				return nil, fmt.Errorf("another job is running: %s is held by pid %s", p, pid)
			}
			return nil, fmt.Errorf("lock %s: %w", p, err)
		}
		// releaseLock removes the file; a lock on a file removed meanwhile guards nothing.
		fi, ferr := f.Stat()
		pi, perr := os.Stat(p)
		if ferr == nil && perr == nil && os.SameFile(fi, pi) {
			if err := f.Truncate(0); err == nil {
				f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return f, nil
		}
		f.Close()
	}
}

// releaseLock removes the lock file while still holding it (no file is left behind), then unlocks.
func releaseLock(f *os.File) error {
	os.Remove(f.Name())
	return f.Close()
}
