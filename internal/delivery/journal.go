package delivery

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/sqlfile"
)

// JournalName is the delivery journal's file name beside the warehouse.
const JournalName = "billsync-deliveries.duckdb"

// JournalPath is the delivery journal beside the warehouse file db.
func JournalPath(db string) string { return filepath.Join(filepath.Dir(db), JournalName) }

//go:embed journal.sql migrations/*.sql
var sqlFS embed.FS

var stmts = sqlfile.MustLoad(sqlFS, "journal.sql", "states", "insert", "insert_file", "attempt", "finish",
	"interrupted", "list", "files", "last_as_of", "first_start", "start_insert",
	"alert_states", "alert_state_delete", "alert_state_insert", "alert_insert", "alert_event_seen", "alerts_unsent", "alert_mark")

// ErrBusy is the error opening the journal returns while another process delivers.
var ErrBusy = errors.New("another delivery is running")

// journal is the open delivery journal. It holds an exclusive flock on path+".lock" from open
// to close: an occurrence is looked up, sent and recorded under it, so two processes (two
// daemons, a daemon and report deliver) never send the same occurrence.
type journal struct {
	path string
	db   *sql.DB
	lock *duckfile.Lock
}

// openJournal opens the journal for the one code path that writes it (a delivery, an alert), under
// its lock. Like the job journal it is its owner's alone (duckfile.PrivateDir, duckfile.Private):
// it says what was sent to whom. List reads it read-only.
func openJournal(ctx context.Context, path string) (*journal, error) {
	if err := duckfile.PrivateDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("delivery journal directory: %w", err)
	}
	lock, err := duckfile.Acquire(path)
	var held *duckfile.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%w: %v", ErrBusy, err)
	}
	if err != nil {
		return nil, err
	}
	var db *sql.DB
	err = duckfile.RetryLocked(ctx, func() error {
		var err error
		db, err = duckfile.Open(path, duckfile.Options{})
		if err == nil {
			db.SetMaxOpenConns(1)
			// DuckDB creates the file at its first use: narrow it before anything is written
			if err = db.PingContext(ctx); err == nil {
				if err = duckfile.Private(path); err == nil {
					err = sqlfile.Migrate(ctx, db, sqlFS, "migrations")
				}
			}
			if err == nil {
				err = duckfile.Private(path)
			}
			if err != nil {
				db.Close()
			}
		}
		return err
	})
	if err != nil {
		lock.Release()
		return nil, fmt.Errorf("delivery journal %s: %w", path, err)
	}
	return &journal{path: path, db: db, lock: lock}, nil
}

func (j *journal) close() error {
	_, cerr := j.db.Exec("CHECKPOINT")
	err := j.db.Close()
	return errors.Join(cerr, err, duckfile.Private(j.path), j.lock.Release())
}

// attemptRow is one journal row of an occurrence, as the next attempt weighs it.
type attemptRow struct {
	id                          int64
	state, transport, messageID string
}

// attempts are the journal's rows of an occurrence, oldest first.
func (j *journal) attempts(ctx context.Context, name, asOf string) ([]attemptRow, error) {
	rows, err := j.db.QueryContext(ctx, stmts.Get("states"), name, asOf)
	if err != nil {
		return nil, fmt.Errorf("delivery journal: %w", err)
	}
	defer rows.Close()
	var out []attemptRow
	for rows.Next() {
		var r attemptRow
		if err := rows.Scan(&r.id, &r.state, &r.transport, &r.messageID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// row is one journal row as written before the send.
type row struct {
	name, asOf, kind   string
	scheduledAt        time.Time
	late               bool
	stale              string
	recipients         []string
	subject, messageID string
	transport, eml     string
	syncRun            int64
	syncFinished       time.Time
	state, err         string
	files              []fileInfo
}

// fileInfo is one file of an occurrence.
type fileInfo struct {
	Path     string
	Bytes    int64
	SHA256   string
	Attached bool
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// insert records r and its files in one transaction and returns its id.
func (j *journal) insert(ctx context.Context, r row) (int64, error) {
	var id int64
	err := duckfile.InTx(ctx, j.db, func(tx *sql.Tx) error {
		var run any
		if r.syncRun > 0 {
			run = r.syncRun
		}
		if err := tx.QueryRowContext(ctx, stmts.Get("insert"), r.name, r.asOf, r.kind, nullTime(r.scheduledAt), r.late,
			nullString(r.stale), strings.Join(r.recipients, ", "), r.subject, r.messageID, r.transport,
			nullString(r.eml), run, nullTime(r.syncFinished), r.state, nullString(r.err),
			time.Now().UTC()).Scan(&id); err != nil {
			return err
		}
		for _, f := range r.files {
			if _, err := tx.ExecContext(ctx, stmts.Get("insert_file"), id, f.Path, f.Bytes, f.SHA256, f.Attached); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = duckfile.Private(j.path) // the write-ahead log DuckDB may have re-created
	}
	if err != nil {
		return 0, fmt.Errorf("delivery journal: record %s %s: %w", r.name, r.asOf, err)
	}
	return id, nil
}

func (j *journal) attempt(ctx context.Context, id int64, attempts int, err error) error {
	if _, e := j.db.ExecContext(ctx, stmts.Get("attempt"), attempts, errText(err), id); e != nil {
		return fmt.Errorf("delivery journal: %w", e)
	}
	return nil
}

func (j *journal) finish(ctx context.Context, id int64, state string, attempts int, err error) error {
	if _, e := j.db.ExecContext(ctx, stmts.Get("finish"), state, attempts, errText(err), time.Now().UTC(), id); e != nil {
		return fmt.Errorf("delivery journal: %w", e)
	}
	return nil
}

// interrupted marks an occurrence's rows left in state sending (a crash during the send) as
// unknown: the server may or may not have accepted them.
func (j *journal) interrupted(ctx context.Context, name, asOf string) error {
	_, err := j.db.ExecContext(ctx, stmts.Get("interrupted"),
		"interrupted while sending: the server may have accepted it; sent again marked as resent", time.Now().UTC(), name, asOf)
	if err != nil {
		return fmt.Errorf("delivery journal: %w", err)
	}
	return nil
}

// lastAsOf is the newest as-of date the journal has for a delivery, "" for none.
func (j *journal) lastAsOf(ctx context.Context, name string) (string, error) {
	var s sql.NullString
	if err := j.db.QueryRowContext(ctx, stmts.Get("last_as_of"), name).Scan(&s); err != nil {
		return "", fmt.Errorf("delivery journal: %w", err)
	}
	return s.String, nil
}

// firstStart is when a scheduler first started against the journal, recording now as that
// when none did.
func (j *journal) firstStart(ctx context.Context, now time.Time) (time.Time, error) {
	var t sql.NullTime
	if err := j.db.QueryRowContext(ctx, stmts.Get("first_start")).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("delivery journal: %w", err)
	}
	if t.Valid {
		return t.Time, nil
	}
	if _, err := j.db.ExecContext(ctx, stmts.Get("start_insert"), now.UTC()); err != nil {
		return time.Time{}, fmt.Errorf("delivery journal: %w", err)
	}
	return now, nil
}

func errText(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}

// Entry is one journal row as report deliveries lists it.
type Entry struct {
	ID                             int64
	Name, AsOf, Kind               string
	Late                           bool
	Stale, State                   string
	Attempts                       int
	Recipients, Subject, MessageID string
	Transport, EML, Error          string
	Started                        time.Time
	Finished                       sql.NullTime
	Files                          int
	Bytes                          int64
	FileList                       []fileInfo
}

// List reads the newest limit rows of the journal at path (of one delivery when name is set),
// newest first, with their files. A journal not yet written lists nothing.
func List(ctx context.Context, path, name string, limit int) ([]Entry, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	// read-only and confined: listing takes no lock and cannot change what it lists
	db, err := duckfile.OpenReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("delivery journal %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := duckfile.Confine(ctx, db, duckfile.Confinement{}); err != nil {
		return nil, fmt.Errorf("delivery journal %s: %w", path, err)
	}
	j := &journal{path: path, db: db}
	rows, err := j.db.QueryContext(ctx, stmts.Get("list"), name, name, limit)
	if err != nil {
		return nil, fmt.Errorf("delivery journal: %w", err)
	}
	var out []Entry
	for rows.Next() {
		var e Entry
		if err := rows.Scan(&e.ID, &e.Name, &e.AsOf, &e.Kind, &e.Late, &e.Stale, &e.State, &e.Attempts,
			&e.Recipients, &e.Subject, &e.MessageID, &e.Transport, &e.EML, &e.Error, &e.Started, &e.Finished,
			&e.Files, &e.Bytes); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		fr, err := j.db.QueryContext(ctx, stmts.Get("files"), out[i].ID)
		if err != nil {
			return nil, err
		}
		for fr.Next() {
			var f fileInfo
			if err := fr.Scan(&f.Path, &f.Bytes, &f.SHA256, &f.Attached); err != nil {
				fr.Close()
				return nil, err
			}
			out[i].FileList = append(out[i].FileList, f)
		}
		fr.Close()
	}
	return out, nil
}
