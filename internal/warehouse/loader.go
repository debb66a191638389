package warehouse

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Loader stages one entity's raw records and merges them into its table.
// Add is called from one goroutine; Merge ends the loader.
type Loader struct {
	b          *Build
	entity     Entity
	def        *entityDef
	runID      int64
	account    string
	observedAt time.Time

	conn   *sql.Conn // staging and merge temp tables live on this connection
	app    *duckdb.Appender
	seq    int64
	closed bool
}

// MergeResult counts what a merge did to the entity's table.
type MergeResult struct {
	Inserted, Updated, Unchanged, Deleted, Restored int64
}

const createStage = `CREATE OR REPLACE TEMP TABLE stage (seq BIGINT, page INTEGER, idx INTEGER, raw VARCHAR)`

// NewLoader opens a loader for e. One loader per entity may be open at a time.
func (b *Build) NewLoader(ctx context.Context, e Entity, runID int64, account string, observedAt time.Time) (*Loader, error) {
	def, ok := entityDefs[e]
	if !ok {
		return nil, fmt.Errorf("new loader: unknown entity %q", e)
	}
	if account == "" {
		return nil, fmt.Errorf("new %s loader: empty account", e)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil, fmt.Errorf("new %s loader: build is closed", e)
	}
	if _, busy := b.loaders[e]; busy {
		return nil, fmt.Errorf("new %s loader: one is already open", e)
	}
	l := &Loader{b: b, entity: e, def: def, runID: runID, account: account, observedAt: observedAt.UTC()}
	if err := l.open(ctx); err != nil {
		return nil, fmt.Errorf("new %s loader: %w", e, err)
	}
	b.loaders[e] = l
	return l, nil
}

func (l *Loader) open(ctx context.Context) error {
	conn, err := l.b.db.Conn(ctx)
	if err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, createStage); err != nil {
		conn.Close()
		return err
	}
	err = conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", "stage")
		l.app = a
		return err
	})
	if err != nil {
		conn.Close()
		return fmt.Errorf("appender: %w", err)
	}
	l.conn = conn
	return nil
}

// Add stages one record's exact bytes; page and idx locate it in error messages.
func (l *Loader) Add(page, idx int, raw []byte) error {
	if l.closed {
		return fmt.Errorf("%s page %d item %d: loader is closed", l.entity, page, idx)
	}
	if !looksLikeObject(raw) {
		return fmt.Errorf("%s page %d item %d: record is not a JSON object", l.entity, page, idx)
	}
	l.seq++
	if err := l.app.AppendRow(l.seq, int32(page), int32(idx), string(raw)); err != nil {
		return fmt.Errorf("%s page %d item %d: stage: %w", l.entity, page, idx, err)
	}
	return nil
}

// looksLikeObject is the cheap check done per record; full parsing happens in SQL.
func looksLikeObject(raw []byte) bool {
	s := strings.TrimSpace(string(raw))
	return len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}'
}

// DistinctIDs counts the distinct ids staged so far.
func (l *Loader) DistinctIDs(ctx context.Context) (int64, error) {
	if l.closed {
		return 0, fmt.Errorf("%s distinct ids: loader is closed", l.entity)
	}
	if err := l.app.Flush(); err != nil {
		return 0, fmt.Errorf("%s distinct ids: flush: %w", l.entity, err)
	}
	var n int64
	err := l.conn.QueryRowContext(ctx, `SELECT count(DISTINCT raw->>'$.id') FROM stage`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("%s distinct ids: %w", l.entity, err)
	}
	return n, nil
}

// Merge validates the staged records, then in one transaction records changes
// and upserts them. full says the stream saw the whole list, so rows of the
// account that no merge of this run saw are marked deleted upstream (ignored
// for incremental entities). On a validation error nothing is merged. Merge
// ends the loader.
func (l *Loader) Merge(ctx context.Context, full bool) (MergeResult, error) {
	if l.closed {
		return MergeResult{}, fmt.Errorf("merge %s: loader is closed", l.entity)
	}
	defer l.release()
	start := time.Now()
	if err := l.app.Close(); err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: flush staging: %w", l.entity, err)
	}
	if err := l.prepare(ctx); err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", l.entity, err)
	}
	if err := l.validate(ctx); err != nil {
		return MergeResult{}, err
	}
	res, err := l.apply(ctx, full && l.def.deletes)
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", l.entity, err)
	}
	l.b.log.Info("merged", "entity", l.entity, "account", l.account, "run", l.runID, "staged", l.seq,
		"inserted", res.Inserted, "updated", res.Updated, "unchanged", res.Unchanged,
		"deleted", res.Deleted, "restored", res.Restored, "took", time.Since(start).Round(time.Millisecond))
	return res, nil
}

func (l *Loader) prepare(ctx context.Context) error {
	_, err := l.conn.ExecContext(ctx,
		`CREATE OR REPLACE TEMP TABLE merge_ctx AS SELECT ?::VARCHAR AS account, ?::BIGINT AS run_id, ?::TIMESTAMPTZ AS observed_at`,
		l.account, l.runID, l.observedAt)
	if err != nil {
		return fmt.Errorf("merge context: %w", err)
	}
	t := time.Now()
	if _, err := l.conn.ExecContext(ctx, l.def.sql["project"]); err != nil {
		return fmt.Errorf("project: %w", err)
	}
	l.timed("project", t)
	return nil
}

const problemsQuery = `SELECT x_page, x_idx, coalesce(id, ''), x_problems::VARCHAR[], count(*) OVER ()
FROM projected WHERE len(x_problems) > 0 ORDER BY x_seq LIMIT 5`

// validate fails with up to five located problems when any staged record is bad.
func (l *Loader) validate(ctx context.Context) error {
	rows, err := l.conn.QueryContext(ctx, problemsQuery)
	if err != nil {
		return fmt.Errorf("merge %s: validate: %w", l.entity, err)
	}
	defer rows.Close()
	var lines []string
	var total int64
	for rows.Next() {
		var page, idx int64
		var id string
		var problems []any
		if err := rows.Scan(&page, &idx, &id, &problems, &total); err != nil {
			return fmt.Errorf("merge %s: validate: %w", l.entity, err)
		}
		lines = append(lines, l.locate(page, idx, id)+": "+joinAny(problems))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("merge %s: validate: %w", l.entity, err)
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("merge %s: %d invalid records, nothing merged:\n  %s", l.entity, total, strings.Join(lines, "\n  "))
}

func (l *Loader) locate(page, idx int64, id string) string {
	loc := fmt.Sprintf("%s page %d item %d", l.entity, page, idx)
	if id != "" {
		loc += " (id " + id + ")"
	}
	return loc
}

func joinAny(xs []any) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, "; ")
}

// apply runs the merge steps in one transaction.
func (l *Loader) apply(ctx context.Context, full bool) (MergeResult, error) {
	var res MergeResult
	t := time.Now()
	if _, err := l.conn.ExecContext(ctx, l.def.sql["dedupe"]); err != nil {
		return res, fmt.Errorf("dedupe: %w", err)
	}
	l.timed("dedupe", t)
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	t = time.Now()
	if err := execStep(ctx, tx, "classify", l.def.sql["classify"]); err != nil {
		return res, err
	}
	l.timed("classify", t)
	t = time.Now()
	err = tx.QueryRowContext(ctx, l.def.sql["counts"]).Scan(&res.Inserted, &res.Updated, &res.Unchanged, &res.Restored)
	if err != nil {
		return res, fmt.Errorf("counts: %w", err)
	}
	l.timed("counts", t)
	steps := []string{"lifecycle", "changes", "upsert"}
	for _, d := range l.def.derived {
		steps = append(steps, "derived_"+d)
	}
	for _, step := range steps {
		t := time.Now()
		if err := execStep(ctx, tx, step, l.def.sql[step]); err != nil {
			return res, err
		}
		l.timed(step, t)
	}
	if full {
		t = time.Now()
		r, err := tx.ExecContext(ctx, l.def.sql["deleted"])
		if err != nil {
			return res, fmt.Errorf("deleted: %w", err)
		}
		res.Deleted, _ = r.RowsAffected()
		l.timed("deleted", t)
	}
	t = time.Now()
	defer l.timed("commit", t)
	return res, tx.Commit()
}

func execStep(ctx context.Context, tx *sql.Tx, name, text string) error {
	if strings.TrimSpace(stripComments(text)) == "" {
		return nil // an entity opted out of this step
	}
	if _, err := tx.ExecContext(ctx, text); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// timed logs a merge step's duration at debug level: the knob for tuning merge SQL.
func (l *Loader) timed(step string, start time.Time) {
	l.b.log.Debug("merge step", "entity", l.entity, "step", step, "took", time.Since(start).Round(time.Millisecond))
}

func stripComments(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// release drops the loader's temp tables and returns its connection.
func (l *Loader) release() {
	l.b.mu.Lock()
	delete(l.b.loaders, l.entity)
	l.b.mu.Unlock()
	if err := l.close(); err != nil {
		l.b.log.Warn("loader cleanup", "entity", l.entity, "err", err)
	}
}

func (l *Loader) close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	if l.app != nil {
		l.app.Close() // already closed after a merge; the error then says so
	}
	ctx := context.Background()
	// the connection goes back to the pool: its temp objects must not outlive the loader
	for _, stmt := range []string{"DROP VIEW IF EXISTS temp.incoming", "DROP TABLE IF EXISTS temp.stage",
		"DROP TABLE IF EXISTS temp.projected", "DROP TABLE IF EXISTS temp.merge_ctx", "DROP TABLE IF EXISTS temp.merge_state",
		"DROP TABLE IF EXISTS temp.incoming_variants", "DROP TABLE IF EXISTS temp.incoming_transactions"} {
		if _, err := l.conn.ExecContext(ctx, stmt); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, l.conn.Close())
	return errors.Join(errs...)
}
