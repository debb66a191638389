package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/syncdata"
)

// startRun begins a run for account, or returns the account's unfinished run
// when the build resumed one.
func (b *Build) startRun(ctx context.Context, account string, startedAt time.Time) (syncdata.Run, error) {
	if account == "" {
		return syncdata.Run{}, errors.New("start run: empty account")
	}
	var id int64
	var src, failure sql.NullString
	var off sql.NullInt64
	err := b.db.QueryRowContext(ctx, stateSQL.Get("find_unfinished_run"), account).Scan(&id, &src, &off, &failure)
	switch {
	case err == nil:
		b.log.Info("resuming run", "run", id, "account", account)
		return syncdata.Run{ID: id, Account: account, Resumed: true, Failure: failure.String,
			Clock: syncdata.RunClock{Source: src.String, Offset: time.Duration(off.Int64) * time.Millisecond,
				NoDate: src.Valid && !off.Valid}}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return syncdata.Run{}, fmt.Errorf("start run for %s: %w", account, err)
	}
	if err := b.db.QueryRowContext(ctx, stateSQL.Get("insert_run"), account, startedAt.UTC()).Scan(&id); err != nil {
		return syncdata.Run{}, fmt.Errorf("start run for %s: %w", account, err)
	}
	return syncdata.Run{ID: id, Account: account}, nil
}

// setRunClock records the clock a run decided to store its times by.
func (b *Build) setRunClock(ctx context.Context, runID int64, c syncdata.RunClock) error {
	off := sql.NullInt64{Int64: c.Offset.Milliseconds(), Valid: !c.NoDate}
	if _, err := b.db.ExecContext(ctx, stateSQL.Get("set_run_clock"), c.Source, off, runID); err != nil {
		return fmt.Errorf("record the clock of run %d: %w", runID, err)
	}
	return nil
}

// RecordFailure notes, in the unpublished build, what account's unfinished run failed with
// (a FailureSignature), and reports whether its previous attempt failed the same way. The run
// stays unfinished either way; the caller decides whether to resume or discard the build.
func (b *Build) RecordFailure(ctx context.Context, account, signature string) (again bool, err error) {
	var id int64
	var src, prev sql.NullString
	var off sql.NullInt64
	err = b.db.QueryRowContext(ctx, stateSQL.Get("find_unfinished_run"), account).Scan(&id, &src, &off, &prev)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record the failure of %s's run: %w", account, err)
	}
	if _, err := b.db.ExecContext(ctx, stateSQL.Get("set_run_failure"), signature, id); err != nil {
		return false, fmt.Errorf("record the failure of run %d: %w", id, err)
	}
	return prev.Valid && prev.String == signature, nil
}

// FailureSignature is err's message with its numbers folded, so two attempts that failed the
// same way (the same record refused, the same page contradicting itself) compare equal although
// counts, pages and durations differ.
func FailureSignature(err error) string {
	return digits.ReplaceAllString(err.Error(), "#")
}

var digits = regexp.MustCompile(`[0-9]+`)

// repairFutureTimes forgets what earlier runs stored after latest, the latest time this
// machine's clock allows (a run that trusted a service clock ahead of it stored them): the
// customers' credit read times, which would hold their next reads back past the refresh bound,
// and the webhook cursor, which would skip deliveries until then. The customers are read again
// in full and the webhook history from its start.
func (b *Build) repairFutureTimes(ctx context.Context, account string, latest time.Time) (credit, cursors int64, err error) {
	err = b.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, stateSQL.Get("future_credit_reads"), account, latest.UTC())
		if err != nil {
			return err
		}
		credit, _ = res.RowsAffected()
		if res, err = tx.ExecContext(ctx, stateSQL.Get("future_cursors"), account, latest.UnixMilli()); err != nil {
			return err
		}
		cursors, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("repair stored times of %s: %w", account, err)
	}
	return credit, cursors, nil
}

// aheadClockSeen is the latest the service's clock read in an earlier run of account that stored
// records it dated ahead of this machine's clock (state.sql, ahead_clock_seen); zero when none.
func (b *Build) aheadClockSeen(ctx context.Context, account string) (time.Time, error) {
	var t sql.NullTime
	if err := b.db.QueryRowContext(ctx, stateSQL.Get("ahead_clock_seen"), account).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("the service's clock as earlier runs of %s read it: %w", account, err)
	}
	if !t.Valid {
		return time.Time{}, nil
	}
	return t.Time.UTC(), nil
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
func (b *Build) recordStream(ctx context.Context, runID int64, s syncdata.StreamStats) error {
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
func (b *Build) finishRun(ctx context.Context, runID int64, s syncdata.RunStats) error {
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
