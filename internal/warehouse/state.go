package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
)

// Run is one account's sync run inside a build.
type Run struct {
	ID      int64
	Account string
	Resumed bool // the run was interrupted before and continues now
}

// StreamStats is what one stream (one endpoint walk) did in a run.
type StreamStats struct {
	Stream, Entity                    string
	Started, Finished                 time.Time
	Pages, Records, Requests, Retries int64
	Complete                          bool // the stream reached its end; a resume skips it
	Error                             string
}

// RunStats closes a run. Status is "succeeded", "failed" or "partial".
type RunStats struct {
	Status                     string
	Finished                   time.Time // zero means now
	Records, Requests, Retries int64
	Error                      string
}

// startRun begins a run for account, or returns the account's unfinished run
// when the build resumed one.
func (b *Build) startRun(ctx context.Context, account string, startedAt time.Time) (Run, error) {
	if account == "" {
		return Run{}, errors.New("start run: empty account")
	}
	var id int64
	err := b.db.QueryRowContext(ctx, stateSQL.Get("find_unfinished_run"), account).Scan(&id)
	switch {
	case err == nil:
		b.log.Info("resuming run", "run", id, "account", account)
		return Run{ID: id, Account: account, Resumed: true}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Run{}, fmt.Errorf("start run for %s: %w", account, err)
	}
	if err := b.db.QueryRowContext(ctx, stateSQL.Get("insert_run"), account, startedAt.UTC()).Scan(&id); err != nil {
		return Run{}, fmt.Errorf("start run for %s: %w", account, err)
	}
	return Run{ID: id, Account: account}, nil
}

// streamDone reports whether the run already completed stream (resume skips it).
func (b *Build) streamDone(ctx context.Context, runID int64, stream string) (bool, error) {
	var done bool
	if err := b.db.QueryRowContext(ctx, stateSQL.Get("stream_done"), runID, stream).Scan(&done); err != nil {
		return false, fmt.Errorf("stream %s of run %d: %w", stream, runID, err)
	}
	return done, nil
}

// recordStream stores a stream's statistics, replacing an earlier record of it in the run.
func (b *Build) recordStream(ctx context.Context, runID int64, s StreamStats) error {
	if s.Stream == "" {
		return fmt.Errorf("record stream of run %d: empty stream name", runID)
	}
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, stateSQL.Get("delete_stream"), runID, s.Stream); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, stateSQL.Get("insert_stream"), runID, s.Stream, s.Entity,
			nullTime(s.Started), nullTime(s.Finished), s.Pages, s.Records, s.Requests, s.Retries,
			s.Complete, nullString(s.Error))
		return err
	})
	if err != nil {
		return fmt.Errorf("record stream %s of run %d: %w", s.Stream, runID, err)
	}
	return nil
}

// finishRun closes a run with its outcome and totals.
func (b *Build) finishRun(ctx context.Context, runID int64, s RunStats) error {
	switch s.Status {
	case "succeeded", "failed", "partial":
	default:
		return fmt.Errorf("finish run %d: status %q is not succeeded, failed or partial", runID, s.Status)
	}
	finished := s.Finished
	if finished.IsZero() {
		finished = time.Now()
	}
	res, err := b.db.ExecContext(ctx, stateSQL.Get("finish_run"), s.Status, finished.UTC(),
		s.Records, s.Requests, s.Retries, nullString(s.Error), runID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("finish run %d: no such run", runID)
	}
	return nil
}

// Cursor returns the stored cursor of an account's stream, "" when none.
func (b *Build) cursor(ctx context.Context, account, stream string) (string, error) {
	var v sql.NullString
	err := b.db.QueryRowContext(ctx, stateSQL.Get("get_cursor"), account, stream).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("cursor %s/%s: %w", account, stream, err)
	}
	return v.String, nil
}

// setCursor stores the cursor of an account's stream.
func (b *Build) setCursor(ctx context.Context, account, stream, value string, runID int64) error {
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, stateSQL.Get("delete_cursor"), account, stream); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, stateSQL.Get("insert_cursor"), account, stream, value, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("set cursor %s/%s: %w", account, stream, err)
	}
	return nil
}

func (b *Build) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return duckfile.InTx(ctx, b.db, fn)
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
