package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/sqlfile"
)

// JournalFile is the journal's file name beside the warehouse (journalfile.Name).
const JournalFile = journalfile.Name

// DefaultJournalPath is the journal stored beside the warehouse file.
func DefaultJournalPath(warehousePath string) string { return journalfile.DefaultPath(warehousePath) }

// Journal is the open job journal. It holds an exclusive flock on path+".lock" while open, so two job
// processes never write it at once.
type Journal struct {
	path string
	db   *sql.DB
	lock *duckfile.Lock
}

// OpenJournal locks, opens (creating it if needed) and migrates the journal at path. The journal is
// the record of intent (who planned, who approved, what was sent), so it is its owner's and their
// group's alone (the people who plan and approve share one group, four eyes being two logins): its
// folder is refused when every user may write in it, and the file and its write-ahead log are
// kept 0660 (no access for others), a journal an older billsync left readable narrowed at open. Only this (the
// writer: syncer job, the daemon's job path) opens it writable; every reader attaches it read-only
// (journalfile.Attach, CreditSends), confined so it cannot re-attach it writable.
func OpenJournal(ctx context.Context, path string) (*Journal, error) {
	if err := duckfile.GroupDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("job journal directory: %w", err)
	}
	lock, err := duckfile.Acquire(path)
	var held *duckfile.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("another job is running: %w", err)
	}
	if err != nil {
		return nil, err
	}
	db, err := openDuckDB(path, false)
	if err == nil {
		// DuckDB creates the file at its first use: narrow it before anything is written
		if err = db.PingContext(ctx); err == nil {
			if err = duckfile.GroupPrivate(path); err == nil {
				err = migrate(ctx, db)
			}
		}
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		lock.Release()
		return nil, fmt.Errorf("job journal %s: %w", path, err)
	}
	j := &Journal{path: path, db: db, lock: lock}
	if err := j.private(); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// private keeps the journal's file and its write-ahead log, which DuckDB re-creates after a
// checkpoint with the process's umask, 0600: after every write.
func (j *Journal) private() error {
	if err := duckfile.GroupPrivate(j.path); err != nil {
		return fmt.Errorf("job journal %s: keep it private: %w", j.path, err)
	}
	return nil
}

// inTx runs a journal transaction and keeps the journal private after it (apply.go, plan.go).
func (j *Journal) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	if err := duckfile.InTx(ctx, j.db, fn); err != nil {
		return err
	}
	return j.private()
}

// exec runs one journal write outside a transaction and keeps the journal private after it.
func (j *Journal) exec(ctx context.Context, query string, args ...any) error {
	if _, err := j.db.ExecContext(ctx, query, args...); err != nil {
		return err
	}
	return j.private()
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// DB is the journal's handle, for reading it.
func (j *Journal) DB() *sql.DB { return j.db }

// Close checkpoints and closes the journal and releases the lock.
func (j *Journal) Close() error {
	_, cerr := j.db.Exec("CHECKPOINT")
	err := j.db.Close()
	return errors.Join(cerr, err, duckfile.GroupPrivate(j.path), j.lock.Release())
}

// openDuckDB opens the journal file with one connection: the journal is written by one
// goroutine, and a single connection keeps every statement in commit order.
func openDuckDB(path string, readOnly bool) (*sql.DB, error) {
	db, err := duckfile.Open(path, duckfile.Options{ReadOnly: readOnly})
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// migrate applies the journal's embedded migrations not yet recorded in it.
func migrate(ctx context.Context, db *sql.DB) error {
	return sqlfile.Migrate(ctx, db, sqlFS, "migrations")
}
