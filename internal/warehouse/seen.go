package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// seenInRun counts the rows of account that the merges of run runID have seen in e's table. A
// list merged in several batches uses it to check, before marking deletions, that it received
// as many distinct records as the server counts.
func (b *Build) seenInRun(ctx context.Context, e entity.Name, account string, runID int64) (int64, error) {
	def, ok := entityDefs[e]
	if !ok || !def.deletes {
		return 0, fmt.Errorf("seen in run: %q is not a listed entity", e)
	}
	var n int64
	if err := b.db.QueryRowContext(ctx, def.sql["seen_in_run"], account, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("seen in run %d of %s %s: %w", runID, account, e, err)
	}
	return n, nil
}

// markDeleted marks the rows of account in e's table that no merge of run runID saw as deleted
// upstream at observedAt, recording each in record_changes, in one transaction. Only a list
// read whole may ask for it, after all its merges.
func (b *Build) markDeleted(ctx context.Context, e entity.Name, account string, runID int64, observedAt time.Time) (int64, error) {
	def, ok := entityDefs[e]
	if !ok || !def.deletes {
		return 0, fmt.Errorf("mark deleted: %q is not a listed entity", e)
	}
	start := time.Now()
	n, err := b.markDeletedOn(ctx, def, account, runID, observedAt)
	if err != nil {
		return 0, fmt.Errorf("mark deleted %s of %s: %w", e, account, err)
	}
	level := slog.LevelDebug // nothing gone is not news
	if n > 0 {
		level = slog.LevelInfo
	}
	b.log.Log(ctx, level, "marked deleted upstream", "entity", e, "account", account, "run", runID, "deleted", n,
		"took", time.Since(start).Round(time.Millisecond))
	return n, nil
}

func (b *Build) markDeletedOn(ctx context.Context, def *entityDef, account string, runID int64, observedAt time.Time) (n int64, err error) {
	conn, err := b.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer func() {
		// the connection goes back to the pool: its temp table must not outlive this
		_, derr := conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS temp.merge_ctx")
		err = errors.Join(err, derr, conn.Close())
	}()
	if _, err := conn.ExecContext(ctx, createMergeCtx, mergeCtxArgs(account, runID, observedAt, syncdata.TimeBound{})...); err != nil {
		return 0, fmt.Errorf("merge context: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	r, err := tx.ExecContext(ctx, def.sql["deleted"])
	if err != nil {
		return 0, err
	}
	n, _ = r.RowsAffected()
	return n, tx.Commit()
}

// newestCreated is the latest created_at among the rows of account in table that run runID saw.
func (b *Build) newestCreated(ctx context.Context, table, account string, runID int64) (time.Time, bool, error) {
	var t sql.NullTime
	// constant only: the table name comes from the entity registry
	q := strings.ReplaceAll(stateSQL.Get("newest_created"), "__TABLE__", table)
	if err := b.db.QueryRowContext(ctx, q, account, runID).Scan(&t); err != nil {
		return time.Time{}, false, fmt.Errorf("newest createdAt of %s %s: %w", account, table, err)
	}
	return t.Time.UTC(), t.Valid, nil
}
