// Package report turns the published warehouse into finance reports: it runs
// the SQL of queries/ as the definitions of reports/ say and writes each
// report as an .xlsx workbook and one CSV per sheet. It opens the warehouse
// read-only and never needs an API key.
//
// Its files by layer, each using only files of the layers below it (go run ./bench/housemap
// -pkg ./internal/report): locale.go (a language's words and formats), query.go (a query
// file's rows), sharedcall.go; definition.go (reports/*.yaml), conn.go, zone.go, asof.go,
// samenames.go; settings.go (Options resolved), columns.go (result columns, totals, checks);
// xlsx.go (a workbook's data sheet), csvout.go (a sheet's CSV file), headline.go (what the
// summary says); workbook.go (the workbook and its summary sheet), digest.go; report.go (the
// run) and adhoc.go (report -sql). The packages below it write: sheetxml a data sheet's body
// rows, csvout the CSV, both of values as value normalizes them.
package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/gcgoal"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
)

// Generate writes the chosen reports and returns the files it wrote. Every
// file is written under a temporary name and renamed into place.
func Generate(ctx context.Context, o Options) ([]string, error) {
	files, _, err := generate(ctx, o, false)
	return files, err
}

// GenerateDigests is Generate that also returns, per completed report, what its summary
// sheet says first (Digest), in the order of the reports.
func GenerateDigests(ctx context.Context, o Options) ([]string, []Digest, error) {
	return generate(ctx, o, true)
}

func generate(ctx context.Context, o Options, digests bool) ([]string, []Digest, error) {
	s, err := o.resolve()
	if err != nil {
		return nil, nil, err
	}
	s.digests = digests
	defs, err := selectReports(o.Names)
	if err != nil {
		return nil, nil, err
	}
	if err := checkVars(defs, o.Vars); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(s.ReportsOut, 0o755); err != nil {
		return nil, nil, fmt.Errorf("output directory: %w", err)
	}
	db, err := openWarehouse(ctx, s.DB)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	if err := shareCores(ctx, db); err != nil {
		return nil, nil, err
	}
	if s.mem, err = newNativeMemory(ctx, db, s.Log); err != nil {
		return nil, nil, err
	}
	defer gcgoal.Lower(reportGCPercent)()
	s.journal, s.hasJnl = attachJournal(ctx, db, s.Journal)
	if slices.ContainsFunc(defs, func(d *Definition) bool { return len(d.shared) > 0 }) {
		if err := attachScratch(ctx, db); err != nil {
			return nil, nil, err
		}
	}
	if s.warnings, err = asOfWarnings(ctx, db, s.asOf, s.loc, s.TZ.String(), s.Account); err != nil {
		return nil, nil, err
	}
	for _, w := range s.warnings {
		s.Log.Warn(w.text(nil))
	}
	if err := s.proveZone(ctx, db); err != nil {
		return nil, nil, err
	}
	// The reports' own SQL reads only what is attached: no file, no setting but the memory
	// purge's (memory.go) from here on, on every connection the sheets open.
	if err := duckfile.Confine(ctx, db, duckfile.Confinement{Configs: []string{"memory_limit"}}); err != nil {
		return nil, nil, err
	}
	return generateReports(ctx, db, s, defs)
}

// sheetParallelism is how many sheets are made at once, of one report or of several. A sheet
// alternates between a DuckDB query and writing its rows, single-threaded in Go; with two at
// once one writes while the other queries, so neither core idles. More would only add memory:
// each running sheet holds its query's result.
const sheetParallelism = 2

// shareCores gives each of the sheetParallelism sheets made at once its share of the cores as
// DuckDB threads: DuckDB's threads of two queries otherwise wait on and steal each other's
// tasks, for more CPU and no less time (docs/reports.md, "How the reports stay fast and small").
func shareCores(ctx context.Context, db *sql.DB) error {
	n := max(1, runtime.NumCPU()/sheetParallelism)
	if _, err := db.ExecContext(ctx, "SET threads = "+strconv.Itoa(n)); err != nil {
		return fmt.Errorf("set threads: %w", err)
	}
	return nil
}

// generateReports makes the reports' sheets, sheetParallelism at a time, in the order of defs
// and of their sheets, each on a connection of its own (the query files are independent of each
// other: TestQueryFilesStandAlone). The first sheet of a report to start sets the report up
// (prepare, makeShared); meanwhile the other workers take the sheets of other reports rather than
// wait. The sheet that completes a report assembles its workbook and puts its files in place. The
// files are returned in the order of defs. After a sheet fails no other report starts; the
// reports begun finish (a sheet of a failed one stops at once), and the files of every report
// that completed are returned with the failure.
func generateReports(ctx context.Context, db *sql.DB, s *settings, defs []*Definition) ([]string, []Digest, error) {
	runs := make([]*reportRun, len(defs))
	q := &sheetQueue{}
	q.cond = sync.NewCond(&q.mu)
	for i, d := range defs {
		runs[i] = &reportRun{d: d, sheets: make([]sheetDone, len(d.Sheets)), left: len(d.Sheets)}
		for k := range d.Sheets {
			q.tasks = append(q.tasks, sheetTask{runs[i], k})
		}
	}
	q.started = make([]bool, len(q.tasks))
	var wg sync.WaitGroup
	for range sheetParallelism {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t, setup, ok := q.next()
				if !ok {
					return
				}
				if setup {
					t.r.began = time.Now()
					err := t.r.prepare(ctx, db, s)
					if err == nil {
						err = t.r.makeShared(ctx, db, s)
					}
					if err != nil {
						t.r.fail(err, nil)
					}
					s.Log.Debug("report set up", "report", t.r.d.Name, "shared", len(t.r.shared), "took", time.Since(t.r.began).Round(time.Millisecond))
					q.setUp(t.r)
				}
				if err := t.run(ctx, db, s); err != nil {
					q.fail()
				}
			}
		}()
	}
	wg.Wait()
	var files []string
	var digests []Digest
	var errs []error
	for _, r := range runs {
		r.abortUnfinished(ctx, db, s)
		files = append(files, r.files...)
		if r.err != nil {
			errs = append(errs, fmt.Errorf("report %s: %w", r.d.Name, r.err))
		} else if r.digest != nil {
			digests = append(digests, *r.digest)
		}
	}
	return files, digests, errors.Join(errs...)
}

// sheetQueue hands out the sheets in order, skipping those of a report another worker is setting
// up.
type sheetQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	tasks   []sheetTask
	started []bool
	failed  bool
}

// next is the next sheet to make, and whether the caller must set its report up first; false when
// there is none left (after a failure: none of a report begun).
func (q *sheetQueue) next() (sheetTask, bool, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		waiting := false
		for i, t := range q.tasks {
			if q.started[i] || q.failed && t.r.state == setupNone {
				continue // after a failure no report starts; those begun finish
			}
			if t.r.state == setupRunning {
				waiting = true
				continue
			}
			q.started[i] = true
			setup := t.r.state == setupNone
			if setup {
				t.r.state = setupRunning
			}
			return t, setup, true
		}
		if !waiting {
			return sheetTask{}, false, false
		}
		q.cond.Wait()
	}
}

// setUp says r's setup is over: its sheets can start.
func (q *sheetQueue) setUp(r *reportRun) {
	q.mu.Lock()
	r.state = setupDone
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *sheetQueue) fail() {
	q.mu.Lock()
	q.failed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

type setupState int

const (
	setupNone setupState = iota
	setupRunning
	setupDone
)

// reportRun is one report being made: what its sheets share, set up by the first of them to
// run, and the sheets as they complete.
type reportRun struct {
	d      *Definition
	state  setupState // guarded by the sheetQueue's mutex
	began  time.Time
	shared []*sharedTable
	vals   map[string]string // values titles may use
	vars   map[string]string // the connection's variables, for the summary
	src    []source
	drop   []string
	base   string
	wb     *workbook
	same   *sameNames // names several customers or products carry, for the workbook
	digest *Digest    // what the summary says first, once the report is complete

	mu     sync.Mutex
	sheets []sheetDone
	left   int // sheets not yet done
	err    error
	files  []string
}

// sheetDone is a sheet whose rows are written: its workbook sheet waits to be assembled, its
// CSV to be put in place.
type sheetDone struct {
	out  sheetOutput
	xs   *xlsxSheet
	cs   *csvSheet
	vars map[string]string
}

type sheetTask struct {
	r *reportRun
	k int
}

// run makes one sheet and, when it is the report's last, the report's files. The error is the
// report's, recorded on it.
func (t sheetTask) run(ctx context.Context, db *sql.DB, s *settings) error {
	r := t.r
	if err := r.failure(); err != nil {
		return err // the report's setup or another of its sheets failed
	}
	sh := &r.d.Sheets[t.k]
	done, err := r.runSheet(ctx, db, s, sh)
	if err != nil {
		return r.fail(fmt.Errorf("sheet %q: %w", sh.Name, err), done.cs)
	}
	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		if done.cs != nil {
			done.cs.abort()
		}
		return nil
	}
	r.sheets[t.k] = done
	r.left--
	last := r.left == 0
	r.mu.Unlock()
	if !last {
		return nil
	}
	files, err := r.finish(ctx, s)
	if err != nil {
		return r.fail(err, nil)
	}
	r.files = files
	s.Log.Info("report written", "report", r.d.Name, "as_of", s.asOf, "files", len(files), "took", time.Since(r.began).Round(time.Millisecond))
	return nil
}

func (r *reportRun) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// fail records the report's first error and removes what its sheets wrote (cs: the failing
// sheet's CSV, not yet among them).
func (r *reportRun) fail(err error, cs *csvSheet) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cs != nil {
		cs.abort()
	}
	if r.err == nil {
		r.err = err
	}
	r.abortLocked()
	return err
}

func (r *reportRun) abortLocked() {
	for i := range r.sheets {
		if c := r.sheets[i].cs; c != nil {
			c.abort()
			r.sheets[i].cs = nil
		}
	}
}

// abortUnfinished removes the CSVs of a report whose sheets did not all run, and the shared
// tables they did not read.
func (r *reportRun) abortUnfinished(ctx context.Context, db *sql.DB, s *settings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left > 0 {
		r.abortLocked()
	}
	for _, t := range r.shared {
		if t.left > 0 {
			t.left = 0
			dropShared(ctx, db, s, t)
		}
	}
	if r.wb != nil {
		r.wb.close()
		r.wb = nil
	}
}

// prepare works out what the report's sheets share: the variables' values, the sync runs it is
// based on, the columns to drop, the files' names and the workbook.
func (r *reportRun) prepare(ctx context.Context, db *sql.DB, s *settings) error {
	conn, vals, err := reportConn(ctx, db, s, r.d)
	if err != nil {
		return err
	}
	defer conn.Close()
	r.vals = vals
	if r.src, err = sources(ctx, conn); err != nil {
		return err
	}
	if r.vars, err = variables(ctx, conn); err != nil {
		return err
	}
	// With one account in the warehouse (or one chosen) an account column
	// says the same thing on every row: the summary names it instead.
	if s.Account != "" || len(r.src) <= 1 {
		r.drop = []string{"account"}
	}
	r.base = filepath.Join(s.ReportsOut, fileBase(r.d, s))
	if r.d.tellsApart() && (s.digests || slices.Contains(s.Formats, "xlsx")) {
		// for the workbook and the digest's headline alike
		if r.same, err = s.sameNames(ctx, conn); err != nil {
			return err
		}
	}
	if slices.Contains(s.Formats, "xlsx") {
		if r.wb, err = newWorkbook(s); err != nil {
			return err
		}
		r.wb.footer = footerText(r.d.Title.In(s.Locale), s.lang.date(s.AsOf), s.lang)
		r.wb.same = r.same
	}
	return nil
}

// reportConn is a connection of its own for a report's sheet, with the report's variables set
// (variables are per connection), and the values titles may use.
func reportConn(ctx context.Context, db *sql.DB, s *settings, d *Definition) (*sql.Conn, map[string]string, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := prepareConn(ctx, conn, s.hasJnl); err != nil {
		conn.Close()
		return nil, nil, err
	}
	vals, err := setReportVars(ctx, conn, s, d)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, vals, nil
}

// finish assembles the workbook's sheets in order, its summary, and puts the report's files in
// place, once every sheet's rows are written.
func (r *reportRun) finish(ctx context.Context, s *settings) ([]string, error) {
	var outs []sheetOutput
	vars := maps.Clone(r.vars)
	for i := range r.sheets {
		sd := &r.sheets[i]
		if sd.xs != nil {
			r.wb.sheets = append(r.wb.sheets, sd.xs)
			var chk checkResult
			if sd.out.check != nil {
				chk = *sd.out.check
			}
			if err := sd.xs.assemble(sd.out.sheet, sd.out.tot, chk); err != nil {
				return nil, fmt.Errorf("sheet %q: %w", sd.out.sheet.Name, err)
			}
			sd.out.total = sd.xs.totalRow
		}
		// In the order the sheets' queries would have run on one connection.
		maps.Copy(vars, sd.vars)
		outs = append(outs, sd.out)
	}
	var files []string
	// The CSVs are complete; put them in place together once every sheet ran.
	r.mu.Lock()
	for i := range r.sheets {
		c := r.sheets[i].cs
		if c == nil {
			continue
		}
		if err := c.finish(); err != nil {
			r.mu.Unlock()
			return nil, err
		}
		r.sheets[i].cs = nil
		files = append(files, c.file.Path())
	}
	r.mu.Unlock()
	if r.wb != nil {
		if err := r.wb.summary(r.d, s, vars, r.src, outs); err != nil {
			return nil, fmt.Errorf("summary: %w", err)
		}
		err := r.wb.save(r.base + ".xlsx")
		r.wb.close() // the report's last sheet is done: nothing else uses the workbook
		r.wb = nil
		if err != nil {
			return nil, err
		}
		files = append(files, r.base+".xlsx")
	}
	sort.Strings(files)
	if s.digests {
		r.digest = digestOf(r.d, s, vars, r.src, outs, r.same, files)
	}
	return files, nil
}

// openWarehouse opens the published warehouse read-only for reports.
func openWarehouse(ctx context.Context, path string) (*sql.DB, error) {
	return warehouse.OpenReadOnly(ctx, path)
}

// runSheet streams one sheet's query, on a connection of its own, into the rows of its
// workbook sheet and its CSV.
func (r *reportRun) runSheet(ctx context.Context, db *sql.DB, s *settings, sh *Sheet) (sheetDone, error) {
	done := sheetDone{out: sheetOutput{sheet: sh}}
	out := &done.out
	conn, _, err := reportConn(ctx, db, s, r.d)
	if err != nil {
		return done, err
	}
	defer conn.Close()
	var (
		tot     *totals
		view    []any
		printed = func([]any) bool { return true }
		counted func([]any) bool
	)
	began := time.Now()
	start := func(res result) error {
		// The driver hands over the first row once DuckDB has the whole
		// result: what the query needed beyond it is free now.
		s.Log.Debug("query ran", "query", sh.Query, "took", time.Since(began).Round(time.Millisecond))
		r.readShared(ctx, db, s, sh.Query)
		s.mem.release(ctx)
		out.cols = resolveColumns(sh, res, r.vals, s.Locale, r.drop...)
		view = make([]any, len(out.cols))
		tot = newTotals(out.cols)
		tot.watch(sh)
		counted = func([]any) bool { return true }
		if w := sh.CountWhere; w != nil {
			i := slices.IndexFunc(out.cols, func(c column) bool { return c.name == w.Column })
			if i < 0 {
				return fmt.Errorf("%s: count_where: no column %s in the result", sh.Query, w.Column)
			}
			counted = func(v []any) bool { s, _ := v[i].(string); return slices.Contains(w.Values, s) }
		}
		if p := sh.PrintOnly; p != nil {
			i := slices.IndexFunc(out.cols, func(c column) bool { return c.name == p.Column })
			if i < 0 {
				return fmt.Errorf("%s: print_only: no column %s in the result", sh.Query, p.Column)
			}
			printed = func(v []any) bool { s, _ := v[i].(string); return slices.Contains(p.Values, s) }
		}
		if r.wb != nil {
			done.xs = newXLSXSheet(r.wb.f, r.wb.st, r.wb.loc, r.wb.l, sh.tab(s.Locale), out.cols, r.wb.footer)
			done.xs.mode = r.wb.mode
			if slices.ContainsFunc(out.cols, func(c column) bool { return c.apartKind != "" }) {
				done.xs.same = r.same
			}
		}
		var err error
		if slices.Contains(s.Formats, "csv") {
			done.cs, err = newCSVSheet(r.base+"_"+slug(sh.Name)+".csv", out.cols, s.loc, s.lang, s.dialect)
		}
		return err
	}
	row := func(row []any) error {
		out.rows++
		pick(out.cols, row, view)
		v := view
		tot.add(v)
		if counted(v) {
			out.counted++
		}
		if sh.Headline && len(out.headRows) <= headlineRows {
			out.headRows = append(out.headRows, slices.Clone(v))
		}
		if done.xs != nil && printed(v) {
			if err := done.xs.write(v); err != nil {
				return err
			}
		}
		if done.cs != nil {
			return done.cs.write(v)
		}
		return nil
	}
	text, err := r.sheetSQL(sh.Query)
	if err != nil {
		return done, err
	}
	if err := streamText(ctx, conn, sh.Query, text, start, row); err != nil {
		return done, err
	}
	s.Log.Debug("sheet written", "query", sh.Query, "rows", out.rows, "took", time.Since(began).Round(time.Millisecond))
	s.mem.release(ctx) // and the result itself, now that the rows are closed
	if done.xs != nil {
		chk, err := done.xs.done(sh, tot)
		if err != nil {
			return done, err
		}
		if sh.Check != nil {
			out.check = &chk
		}
	} else if sh.Check != nil {
		chk := tot.check(sh.Check, s.lang)
		out.check = &chk
	}
	out.tot = tot
	if done.vars, err = variables(ctx, conn); err != nil {
		return done, err
	}
	return done, nil
}

// fileBase is the start of a report's file names: the report, the as-of
// date and every variable set to other than its default (the aging basis
// always), so files of differently made reports never share a name.
func fileBase(d *Definition, s *settings) string {
	name := d.Name + "_" + s.asOf
	for _, v := range d.Vars {
		val, ok := s.Vars[v.Name]
		if v.Name == "aging_basis" && !ok {
			val, ok = v.Default, true
		}
		if ok && (val != v.Default || v.Name == "aging_basis") {
			name += "_" + slug(strings.TrimPrefix(v.Name, d.Name+"_")+"-"+val)
		}
	}
	if s.Account != "" {
		name += "_" + slug(s.Account)
	}
	return name
}

// slug is a sheet name as a file name part: "By customer" -> "by-customer".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// scratchDB is the in-memory database Generate attaches for shared results. The warehouse is
// opened read-only, which refuses an in-memory database unless it is attached READ_WRITE.
const scratchDB = "report_scratch"

func attachScratch(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, "ATTACH ':memory:' AS "+scratchDB+" (READ_WRITE)"); err != nil {
		return fmt.Errorf("attach the scratch database for shared results: %w", err)
	}
	return nil
}

// sharedTable is a shared call's rows for one report run.
type sharedTable struct {
	sc    *sharedCall
	table string // qualified name in the scratch database
	left  int    // sheets whose query has not yet read it
}

// makeShared stores the report's shared calls' rows in the scratch database, on a connection with
// the report's variables and the query files' SET VARIABLE lines, as each sheet's would have.
func (r *reportRun) makeShared(ctx context.Context, db *sql.DB, s *settings) error {
	if len(r.d.shared) == 0 {
		return nil
	}
	conn, _, err := reportConn(ctx, db, s, r.d)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, sc := range r.d.shared {
		for _, p := range sc.preamble {
			if _, err := conn.ExecContext(ctx, p); err != nil {
				return fmt.Errorf("shared %s: %s: %w", sc.macro, p, err)
			}
		}
		t := &sharedTable{sc: sc, left: len(sc.sheets),
			table: scratchDB + ".main." + strings.ReplaceAll(r.d.Name, "-", "_") + "__" + sc.macro}
		// Stored before it is made: a failure drops what may exist of it.
		r.shared = append(r.shared, t)
		if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TABLE "+t.table+" AS SELECT * FROM "+sc.call); err != nil {
			return fmt.Errorf("shared %s: %w", sc.macro, err)
		}
	}
	return nil
}

// sheetSQL is the text the sheet runs: its query file with each shared call replaced by the
// table holding its rows (and, when it shares one, without its comments, where the call was
// found; the lines stay where they were, for DuckDB's messages).
func (r *reportRun) sheetSQL(file string) (string, error) {
	b, err := fs.ReadFile(queries.FS, file)
	if err != nil {
		return "", fmt.Errorf("query %s: %w", file, err)
	}
	text := string(b)
	for _, t := range r.shared {
		if !slices.Contains(t.sc.sheets, file) {
			continue
		}
		code := stripComments(text)
		if strings.Count(code, t.sc.call) != 1 {
			return "", fmt.Errorf("query %s: the shared call of %s is not in it once", file, t.sc.macro)
		}
		text = strings.Replace(code, t.sc.call, t.table, 1)
	}
	return text, nil
}

// readShared says the sheet's query has its whole result: the shared tables no other sheet
// still needs are dropped.
func (r *reportRun) readShared(ctx context.Context, db *sql.DB, s *settings, file string) {
	r.mu.Lock()
	var drop []*sharedTable
	for _, t := range r.shared {
		if slices.Contains(t.sc.sheets, file) {
			if t.left--; t.left == 0 {
				drop = append(drop, t)
			}
		}
	}
	r.mu.Unlock()
	for _, t := range drop {
		dropShared(ctx, db, s, t)
	}
}

// dropShared frees a shared table. A failure only costs memory until Generate closes the
// database, so it is logged, not returned.
func dropShared(ctx context.Context, db *sql.DB, s *settings, t *sharedTable) {
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t.table); err != nil {
		s.Log.Warn("could not drop a shared result", "table", t.table, "err", err)
	}
}
