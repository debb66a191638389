package warehouse

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// loader stages one entity's raw records and merges them into its table.
// Add is called from one goroutine; Merge ends the loader.
type loader struct {
	b          *Build
	entity     entity.Name
	def        *entityDef
	runID      int64
	account    string
	observedAt time.Time
	bound      syncdata.TimeBound // the latest time a record may carry; zero: a day after observedAt

	conn   *sql.Conn // staging and merge temp tables live on this connection
	app    *duckdb.Appender
	seq    int64
	closed bool

	unflushed int // bytes appended since the appender last handed its rows to the stage table
}

// stageFlushBytes is how much raw JSON a loader's appender holds before it hands the rows to
// the stage table. The appender collects rows in memory DuckDB's buffer manager does not track
// (so BILLSYNC_MEMORY_LIMIT does not bound it and nothing spills) until a flush; unflushed, it
// would hold a whole webhook batch per stream (docs/sync.md, "What a misbehaving service gets").
const stageFlushBytes = 4 << 20

// createMergeCtx holds what every merge statement reads of its run (see merge/common.sql).
// latest_at and clocks are the plausibility bound of the records' times and the clocks it comes
// from, in words (bs_when; syncdata.TimeBound).
const createMergeCtx = `CREATE OR REPLACE TEMP TABLE merge_ctx AS SELECT ?::VARCHAR AS account, ?::BIGINT AS run_id, ?::TIMESTAMPTZ AS observed_at,
    ?::TIMESTAMPTZ AS latest_at, ?::VARCHAR AS clocks`

// mergeCtxArgs are createMergeCtx's arguments; a zero bound is a day after observedAt, named
// the run's clock.
func mergeCtxArgs(account string, runID int64, observedAt time.Time, bound syncdata.TimeBound) []any {
	if bound.Latest.IsZero() {
		bound = RunClockBound(observedAt)
	}
	return []any{account, runID, observedAt.UTC(), bound.Latest.UTC(), bound.Clocks}
}

// createStage: the record's hash is staged as two UBIGINT halves (rawHash), which the Appender
// takes as plain integers; merge/common.sql's `staged` joins them into the tables' UHUGEINT.
const createStage = `CREATE OR REPLACE TEMP TABLE stage (seq BIGINT, page INTEGER, idx INTEGER, raw VARCHAR, raw_hash_hi UBIGINT, raw_hash_lo UBIGINT)`

// newLoader opens a loader for e on a connection of its own. Staging touches only that
// connection's temp table, so loaders may stage concurrently with each other and with another
// loader's merge. Merges of entities whose tables differ (all of them append to
// record_changes, which never conflicts) may run concurrently; merges writing the same table
// must not: DuckDB fails the later of two transactions updating the same rows. Products and
// their details, payment requests and theirs, share tables.
func (b *Build) newLoader(ctx context.Context, e entity.Name, runID int64, account string, observedAt time.Time) (*loader, error) {
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
	l := &loader{b: b, entity: e, def: def, runID: runID, account: account, observedAt: observedAt.UTC()}
	if err := l.open(ctx); err != nil {
		return nil, fmt.Errorf("new %s loader: %w", e, err)
	}
	b.loaders[l] = struct{}{}
	return l, nil
}

func (l *loader) open(ctx context.Context) error {
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
func (l *loader) Add(page, idx int, raw []byte) error {
	if l.closed {
		return fmt.Errorf("%s page %d item %d: loader is closed", l.entity, page, idx)
	}
	if !looksLikeObject(raw) {
		return fmt.Errorf("%s page %d item %d: record is not a JSON object", l.entity, page, idx)
	}
	l.seq++
	// raw as []byte: the appender copies it into DuckDB's vector at once, where string(raw)
	// would copy every record once more in Go
	hi, lo := rawHash(raw)
	if err := l.app.AppendRow(l.seq, int32(page), int32(idx), raw, hi, lo); err != nil {
		return fmt.Errorf("%s page %d item %d: stage: %w", l.entity, page, idx, l.b.stagingError(err))
	}
	if l.unflushed += len(raw); l.unflushed >= stageFlushBytes {
		l.unflushed = 0
		if err := l.app.Flush(); err != nil {
			return fmt.Errorf("%s page %d item %d: stage: %w", l.entity, page, idx, l.b.stagingError(err))
		}
	}
	return nil
}

// rawHash is what a table's raw_hash column holds: the first 16 bytes of the record's SHA-256,
// read as one big-endian 128-bit number, here as its high and low 64 bits. A nightly merge tells a
// record identical to the stored one by it, so it reads 16 bytes a stored row instead of the row's
// whole raw JSON in a join's hash table. It is a UHUGEINT, not a BLOB: DuckDB carries a random
// 16-byte BLOB a row like a string, which makes a first sync dearer. Migrations 0007 and 0008 give rows stored before the same
// value, in SQL: unhex(left(sha256(raw), 32))::BIT::UHUGEINT.
func rawHash(raw []byte) (hi, lo uint64) {
	h := sha256.Sum256(raw)
	return binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:16])
}

// mergeError wraps a failed merge's error; running out of memory says what to raise.
func (l *loader) mergeError(err error) error {
	return fmt.Errorf("merge %s: %w", l.entity, l.b.explainMemory(err))
}

// outOfMemory says err is DuckDB running out of its memory_limit: not a reason to parse again.
func outOfMemory(err error) bool {
	var de *duckdb.Error
	var me *memoryError
	return errors.As(err, &me) || errors.As(err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory
}

// memoryError is DuckDB running out of the build's memory limit, told with the setting that
// raises it: DuckDB's own advice names its SET statement, which an operator cannot run.
type memoryError struct {
	err   error
	limit string
}

func (e *memoryError) Error() string {
	return fmt.Sprintf("%v\n(the build's DuckDB memory limit is %s: raise BILLSYNC_MEMORY_LIMIT)", e.err, e.limit)
}

func (e *memoryError) Unwrap() error { return e.err }

// explainMemory adds the memory hint to err when DuckDB ran out of memory, once however often
// the error passes through.
func (b *Build) explainMemory(err error) error {
	var me *memoryError
	if err == nil || errors.As(err, &me) || !outOfMemory(err) {
		return err
	}
	return &memoryError{err: err, limit: b.memoryLimit}
}

// stagingError is explainMemory for the Appender, whose flush reports running out of memory as
// text without DuckDB's error type. Staging errors carry no record content, so the text is
// DuckDB's own.
func (b *Build) stagingError(err error) error {
	if err == nil || outOfMemory(err) {
		return b.explainMemory(err)
	}
	if msg := err.Error(); strings.Contains(msg, "failed to pin block") || strings.Contains(msg, "Out of Memory") {
		return &memoryError{err: err, limit: b.memoryLimit}
	}
	return err
}

// looksLikeObject is the cheap check done per record; full parsing happens in SQL.
func looksLikeObject(raw []byte) bool {
	s := bytes.TrimSpace(raw)
	return len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}'
}

// Merge validates the staged records, then in one transaction records changes
// and upserts them. On a validation error nothing is merged. Merge ends the
// loader. Deletions are not a merge's business: see markDeleted.
func (l *loader) Merge(ctx context.Context) (syncdata.MergeResult, error) {
	if l.closed {
		return syncdata.MergeResult{}, fmt.Errorf("merge %s: loader is closed", l.entity)
	}
	defer l.release()
	start := time.Now()
	if err := l.app.Close(); err != nil {
		return syncdata.MergeResult{}, fmt.Errorf("merge %s: flush staging: %w", l.entity, l.b.stagingError(err))
	}
	l.b.mergeMem.RLock()
	unlock := l.b.mergeMem.RUnlock
	defer func() { unlock() }()
	// merge_ctx and the staged view serve every attempt below; only the checked parse sets them again
	if err := l.setContext(ctx, false); err != nil {
		return syncdata.MergeResult{}, l.mergeError(err)
	}
	if res, ok, err := l.direct(ctx); err != nil {
		return syncdata.MergeResult{}, l.mergeError(err)
	} else if ok {
		l.logMerged(ctx, pathDirect, res, start)
		return res, nil
	}
	l.forgetDirectIDs() // this merge writes the table another way
	path, err := l.prepare(ctx)
	if outOfMemory(err) && ctx.Err() == nil {
		// Merges running beside each other share DuckDB's memory limit; this one gets it all.
		l.b.log.Warn("merge ran out of DuckDB memory beside other merges: merging it alone", "entity", l.entity,
			"memory_limit", l.b.memoryLimit)
		unlock()
		l.b.mergeMem.Lock()
		unlock = l.b.mergeMem.Unlock
		path, err = l.prepare(ctx)
	}
	if err != nil && ctx.Err() == nil && !outOfMemory(err) {
		// Unreadable JSON fails the fast parse; the checked parse reports it per record.
		l.b.log.Debug("merge retries with checked JSON parse", "entity", l.entity, "err", err)
		if err = l.setContext(ctx, true); err == nil {
			path, err = l.prepare(ctx)
		}
	}
	if err != nil {
		return syncdata.MergeResult{}, l.mergeError(err)
	}
	if err := l.dropStage(ctx); err != nil {
		return syncdata.MergeResult{}, fmt.Errorf("merge %s: %w", l.entity, err)
	}
	if err := l.validate(ctx); err != nil {
		return syncdata.MergeResult{}, err
	}
	res, err := l.apply(ctx, path)
	if err != nil {
		return syncdata.MergeResult{}, l.mergeError(err)
	}
	l.logMerged(ctx, path, res, start)
	return res, nil
}

func (l *loader) logMerged(ctx context.Context, path mergePath, res syncdata.MergeResult, start time.Time) {
	// A merge of nothing (a fan-out batch whose reads found no entries) is not news: one
	// "merged" line per batch that carried records.
	level := slog.LevelInfo
	if l.seq == 0 && res == (syncdata.MergeResult{}) {
		level = slog.LevelDebug
	}
	l.b.log.Log(ctx, level, "merged", "entity", l.entity, "account", l.account, "run", l.runID, "staged", l.seq,
		"path", path, "inserted", res.Inserted, "updated", res.Updated, "unchanged", res.Unchanged,
		"deleted", res.Deleted, "restored", res.Restored, "took", time.Since(start).Round(time.Millisecond))
}

// mergePath is how a merge treats the entity's table (see merge/common.sql).
type mergePath string

const (
	pathDirect mergePath = "direct" // a first load in one statement (loader.direct)
	pathFirst  mergePath = "first"  // the account's first sync, no staged id stored yet: parse all, plain insert
	pathList   mergePath = "list"   // parse only records that differ from the stored ones
	pathDetail mergePath = "detail" // detail entities fill columns of listed rows
)

// setContext creates what every merge statement reads: merge_ctx and the staged view.
func (l *loader) setContext(ctx context.Context, checked bool) error {
	_, err := l.conn.ExecContext(ctx, createMergeCtx, mergeCtxArgs(l.account, l.runID, l.observedAt, l.bound)...)
	if err != nil {
		return fmt.Errorf("merge context: %w", err)
	}
	if _, err := l.conn.ExecContext(ctx, `SET VARIABLE bs_checked = ?`, checked); err != nil {
		return fmt.Errorf("merge context: %w", err)
	}
	if _, err := l.conn.ExecContext(ctx, l.def.sql["staged"]); err != nil {
		return fmt.Errorf("staged: %w", err)
	}
	return nil
}

// prepare builds `projected` from the staged records that need parsing (setContext first).
func (l *loader) prepare(ctx context.Context) (mergePath, error) {
	path, err := l.choosePath(ctx)
	if err != nil {
		return "", err
	}
	if path == pathFirst {
		if err := l.project(ctx, "parse_all"); err != nil {
			return "", err
		}
		var overlap bool
		if err := l.conn.QueryRowContext(ctx, l.def.sql["first_overlap"]).Scan(&overlap); err != nil {
			return "", fmt.Errorf("first overlap: %w", err)
		}
		if !overlap {
			return pathFirst, nil
		}
		path = pathList // rare: projected again, from the records that differ
	}
	parse := "parse_all"
	if path == pathList {
		parse = "keys"
	}
	return path, l.project(ctx, parse)
}

// project runs parse (which chooses the staged records to parse) and the entity's projection.
func (l *loader) project(ctx context.Context, parse string) error {
	for _, step := range []string{parse, "project"} {
		t := time.Now()
		if _, err := l.conn.ExecContext(ctx, l.def.sql[step]); err != nil {
			return fmt.Errorf("%s: %w", step, err)
		}
		l.timed(step, t)
	}
	return nil
}

// dropStage drops the staged records once projected holds what the merge needs: nothing reads
// them again, and a batch of a wide list (webhooks) would otherwise sit in DuckDB twice while it
// is inserted and compressed.
func (l *loader) dropStage(ctx context.Context) error {
	for _, stmt := range []string{"DROP VIEW temp.parse_input", "DROP VIEW temp.staged", "DROP TABLE temp.stage"} {
		if _, err := l.conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("drop staging: %w", err)
		}
	}
	return nil
}

// firstPathKey is what the answer of first_path depends on.
type firstPathKey struct {
	table, account string
	run            int64
}

func (l *loader) choosePath(ctx context.Context) (mergePath, error) {
	if l.def.detail {
		return pathDetail, nil
	}
	first, err := l.firstSync(ctx)
	if err != nil {
		return "", err
	}
	if first {
		return pathFirst, nil
	}
	return pathList, nil
}

// runKey names what the Build remembers of the loader's table and account for this run.
func (l *loader) runKey() firstPathKey { return firstPathKey{l.def.table, l.account, l.runID} }

// firstSync says whether no stored row of the loader's account in its table comes from an
// earlier run. The run's merges only add rows of this run and replace rows keeping their
// first_seen_run (deletions only mark rows), so the answer holds for the rest of the run: it is
// asked once per table, account and run.
func (l *loader) firstSync(ctx context.Context) (bool, error) {
	key := l.runKey()
	l.b.mu.Lock()
	first, known := l.b.firstPaths[key]
	l.b.mu.Unlock()
	if known {
		return first, nil
	}
	if err := l.conn.QueryRowContext(ctx, l.def.sql["first_path"]).Scan(&first); err != nil {
		return false, fmt.Errorf("first path: %w", err)
	}
	l.b.mu.Lock()
	l.b.firstPaths[key] = first
	l.b.mu.Unlock()
	return first, nil
}

const problemsQuery = `SELECT x_page, x_idx, coalesce(id, ''), x_problems::VARCHAR[], count(*) OVER ()
FROM projected WHERE len(x_problems) > 0 ORDER BY x_seq LIMIT 5`

// validate fails with up to five located problems when any staged record is bad.
func (l *loader) validate(ctx context.Context) error {
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

func (l *loader) locate(page, idx int64, id string) string {
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

// apply runs the merge steps of path in one transaction.
func (l *loader) apply(ctx context.Context, path mergePath) (syncdata.MergeResult, error) {
	var res syncdata.MergeResult
	dedupe := "dedupe"
	if path == pathList {
		dedupe = "dedupe_keyed"
	}
	if _, err := l.conn.ExecContext(ctx, l.def.sql[dedupe]); err != nil {
		return res, fmt.Errorf("dedupe: %w", err)
	}
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	classify, counts := "classify", "counts"
	if path == pathFirst {
		classify = "classify_first"
		if len(l.def.derived) == 0 { // merge_state is read by derived tables only on this path
			classify, counts = "", "counts_first"
		}
	}
	if classify != "" {
		if err := l.run(ctx, tx, classify); err != nil {
			return res, err
		}
	}
	err = tx.QueryRowContext(ctx, l.def.sql[counts]).Scan(&res.Inserted, &res.Updated, &res.Unchanged, &res.Restored)
	if err != nil {
		return res, fmt.Errorf("%s: %w", counts, err)
	}
	for _, step := range l.steps(path) {
		if err := l.run(ctx, tx, step); err != nil {
			return res, err
		}
	}
	t := time.Now()
	defer l.timed("commit", t)
	return res, tx.Commit()
}

// steps lists the statements after counts for path.
func (l *loader) steps(path mergePath) []string {
	if path == pathFirst {
		steps := []string{"insert_first"}
		for _, d := range l.def.derived {
			steps = append(steps, "derived_"+d+"_incoming", "derived_"+d+"_first")
		}
		return steps
	}
	steps := []string{"lifecycle", "changes", "upsert"}
	for _, d := range l.def.derived {
		steps = append(steps, "derived_"+d+"_incoming", "derived_"+d)
	}
	return steps
}

func (l *loader) run(ctx context.Context, tx *sql.Tx, step string) error {
	if l.def.optOut[step] { // declared in the entity's file and checked when the package loaded
		return nil
	}
	t := time.Now()
	if _, err := tx.ExecContext(ctx, l.def.sql[step]); err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	l.timed(step, t)
	return nil
}

// timed logs a merge step's duration at debug level: the knob for tuning merge SQL.
func (l *loader) timed(step string, start time.Time) {
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

// Discard ends the loader without merging: what it staged is dropped.
func (l *loader) Discard() {
	if !l.closed {
		l.release()
	}
}

// release drops the loader's temp tables and returns its connection.
func (l *loader) release() {
	l.b.mu.Lock()
	delete(l.b.loaders, l)
	l.b.mu.Unlock()
	if err := l.close(); err != nil {
		l.b.log.Warn("loader cleanup", "entity", l.entity, "err", err)
	}
}

func (l *loader) close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	if l.app != nil {
		l.app.Close() // already closed after a merge; the error then says so
	}
	// The connection is closed, not returned to the pool: its temp objects (the stage, the
	// merge's tables and views) go with it, cheaper than dropping each one by one at every merge.
	if err := l.conn.Raw(func(any) error { return driver.ErrBadConn }); !errors.Is(err, driver.ErrBadConn) {
		errs = append(errs, err)
	}
	if err := l.conn.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
