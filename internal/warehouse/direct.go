package warehouse

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/billsync/billsync/internal/syncdata"
)

// idHashes is what the direct path knows of a table's rows of one account during one run: the
// sorted DuckDB hash() of every id stored, so that a batch's ids are checked against them in
// time proportional to the batch. Reading the account's ids from the table at every batch did
// the same in time proportional to the table, which at scale 200 cost as much as the path saved.
// Equal ids hash equal, so no duplicate is missed; two ids that collide only send a batch the
// longer way.
type idHashes []uint64

// directIDs returns the id hashes of the loader's table and account, reading them from the table
// the first time a run asks (a resumed run's table already holds the rows of its earlier attempt).
func (l *loader) directIDs(ctx context.Context, tx *sql.Tx) (idHashes, error) {
	key := l.runKey()
	l.b.mu.Lock()
	ids, ok := l.b.directIDs[key]
	l.b.mu.Unlock()
	if ok {
		return ids, nil
	}
	rows, err := tx.QueryContext(ctx, l.def.sql["direct_ids"], l.account)
	if err != nil {
		return nil, err
	}
	ids, err = scanHashes(rows, nil)
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return ids, nil
}

// keepDirectIDs records the table's id hashes after a committed direct batch.
func (l *loader) keepDirectIDs(ids idHashes) {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	l.b.directIDs[l.runKey()] = ids
}

// forgetDirectIDs drops them when anything else writes the table: the next direct batch reads
// them from the table again.
func (l *loader) forgetDirectIDs() { l.b.forgetDirectIDs(l.def.table, l.account, l.runID) }

// forgetDirectIDs drops a table's id hashes: when something else writes it, or when a list has
// merged its last batch, so that Go holds the hashes of the lists being read only.
func (b *Build) forgetDirectIDs(table, account string, run int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.directIDs, firstPathKey{table, account, run})
}

func scanHashes(rows *sql.Rows, into []uint64) ([]uint64, error) {
	defer rows.Close()
	for rows.Next() {
		var h uint64
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		into = append(into, h)
	}
	return into, rows.Err()
}

// add merges a batch's id hashes into ids. It reports false, leaving ids as they were, when an id
// of the batch is there already or twice in the batch. Merging reuses ids' array: after a true,
// only the returned slice holds the hashes (a failed commit makes the merge forget them).
func (ids idHashes) add(batch []uint64) (idHashes, bool) {
	slices.Sort(batch)
	for i, h := range batch {
		if i > 0 && batch[i-1] == h {
			return ids, false
		}
		if _, found := slices.BinarySearch(ids, h); found {
			return ids, false
		}
	}
	// merged from the back, in place once the slice has room
	n, m := len(ids), len(batch)
	out := slices.Grow(ids, m)[:n+m]
	i, j := n-1, m-1
	for k := n + m - 1; j >= 0; k-- {
		if i >= 0 && out[i] > batch[j] {
			out[k] = out[i]
			i--
		} else {
			out[k] = batch[j]
			j--
		}
	}
	return out, true
}

// direct tries the one-statement first load (merge/common.sql, insert_direct): ok says it merged
// the batch. It applies only to an entity's first load; anything it cannot prove there (a record
// with a problem, JSON the fast parse rejects, an id seen twice, memory) rolls it back, and the
// merge takes the steps that report every problem or keep the later fetch. Only a cancelled
// context is an error. The merge's context is set (setContext).
func (l *loader) direct(ctx context.Context) (res syncdata.MergeResult, ok bool, err error) {
	if !l.def.direct() {
		return res, false, nil
	}
	if path, err := l.choosePath(ctx); err != nil || path != pathFirst {
		return res, false, err
	}
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return res, false, err
	}
	defer tx.Rollback()
	fallBack := func(why string, err error) (syncdata.MergeResult, bool, error) {
		if ctx.Err() != nil {
			return syncdata.MergeResult{}, false, ctx.Err()
		}
		l.b.log.Debug("direct first load falls back", "entity", l.entity, "why", why, "err", err)
		return syncdata.MergeResult{}, false, nil
	}
	stored, err := l.directIDs(ctx, tx)
	if err != nil {
		return fallBack("stored ids", err)
	}
	if err := l.run(ctx, tx, "parse_all"); err != nil {
		return fallBack("statement", err)
	}
	var before int64
	if err := tx.QueryRowContext(ctx, l.def.sql["direct_rowid"]).Scan(&before); err != nil {
		return fallBack("row ids", err)
	}
	t := time.Now()
	r, err := tx.ExecContext(ctx, l.def.sql["insert_direct"])
	if err != nil {
		return fallBack("insert", err)
	}
	l.timed("insert_direct", t)
	inserted, err := r.RowsAffected()
	if err != nil {
		return fallBack("insert", err)
	}
	// The rows above the row id the table held before are the insert's (nothing else writes the
	// table in this transaction, and a transaction sees the rows it started with unchanged); as
	// many as it inserted, they are all of them.
	t = time.Now()
	rows, err := tx.QueryContext(ctx, l.def.sql["direct_batch_ids"], before)
	if err != nil {
		return fallBack("batch ids", err)
	}
	batch, err := scanHashes(rows, make([]uint64, 0, inserted))
	if err != nil {
		return fallBack("batch ids", err)
	}
	l.timed("direct_batch_ids", t)
	if int64(len(batch)) != inserted {
		return fallBack(fmt.Sprintf("%d rows above row id %d, %d inserted", len(batch), before, inserted), nil)
	}
	ids, fresh := stored.add(batch)
	if !fresh {
		return fallBack("an id has two rows", nil)
	}
	t = time.Now()
	defer l.timed("commit", t)
	if err := tx.Commit(); err != nil {
		return fallBack("commit", err)
	}
	l.keepDirectIDs(ids)
	return syncdata.MergeResult{Inserted: int64(len(batch))}, true, nil
}
