package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
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

// OpenJournal locks, opens (creating it if needed) and migrates the journal at path.
func OpenJournal(ctx context.Context, path string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil { // less the umask: a group may share it
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
		err = migrate(ctx, db)
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		lock.Release()
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
	return errors.Join(cerr, err, j.lock.Release())
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

// inTx runs a journal transaction (apply.go, plan.go).
var inTx = duckfile.InTx
