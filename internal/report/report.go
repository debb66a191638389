// Package report turns the published warehouse into finance reports: it runs
// the SQL of queries/ as the definitions of reports/ say and writes each
// report as an .xlsx workbook and one CSV per sheet. It opens the warehouse
// read-only and never needs an API key.
package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/gcgoal"
	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/warehouse"
)

// Options says which reports to produce, as of when, and where.
type Options struct {
	DB       string            // published warehouse file
	Journal  string            // write-job journal; "" = billsync-jobs.duckdb beside DB
	OutDir   string            // created if missing
	Formats  []string          // "xlsx", "csv"; empty = both
	AsOf     time.Time         // report date (its calendar date counts); zero = today in TZ
	TZ       string            // IANA zone of dates and day boundaries; "" = config.DefaultTZ
	Currency string            // ISO code shown on amounts; "" = IDR
	Account  string            // only this account; "" = all accounts in the warehouse
	Names    []string          // reports to produce; empty = all
	Vars     map[string]string // report variables (see -list), e.g. aging_basis=created
	Locale   string            // language of labels, numbers and dates: "id" or "en"; "" = id
	// CSVDialect is how the CSV files write numbers and times: "rfc" (""), or "id" for a
	// spreadsheet with Indonesian settings (CSVDialects).
	CSVDialect string
	// Notice is printed on every summary sheet among the as-of warnings: what the caller knows
	// about the figures that the warehouse cannot say (a delivery's staleness).
	Notice string
	Log    *slog.Logger
}

const summarySheet = "Summary"

// defaultCurrency is BILLSYNC_CURRENCY's default (config.Report).
var defaultCurrency = config.Defaults[config.Report]().Currency

// settings are Options resolved and checked.
type settings struct {
	Options
	loc     *time.Location
	asOf    string      // YYYY-MM-DD
	journal journalNote // what the summary sheet says about the journal
	hasJnl  bool
	mem     *nativeMemory
	digests bool // GenerateDigests: each report's Digest is made
	lang    *lang
	dialect *csvDialect
	zone    *fixedZone // where local_time() may skip ICU; nil: nowhere
	// warnings about the as-of date (asOfWarnings), logged and on every summary sheet
	warnings []asOfWarning
	// the names several customers or products carry, read once for every report that prints
	// names (loadSameNames)
	sameOnce sync.Once
	same     *sameNames
	sameErr  error
}

// sameNames reads the names several customers or products carry, once per run, on the
// connection of the first report that needs them (the account is every report's).
func (s *settings) sameNames(ctx context.Context, conn *sql.Conn) (*sameNames, error) {
	s.sameOnce.Do(func() { s.same, s.sameErr = loadSameNames(ctx, conn) })
	return s.same, s.sameErr
}

func (o Options) resolve() (*settings, error) {
	s := &settings{Options: o}
	if s.TZ == "" {
		s.TZ = config.DefaultTZ
	}
	loc, err := time.LoadLocation(s.TZ)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", s.TZ, err)
	}
	s.loc = loc
	if s.lang, err = langOf(s.Locale); err != nil {
		return nil, err
	}
	s.Locale = s.lang.code
	if s.dialect, err = dialectOf(s.CSVDialect); err != nil {
		return nil, err
	}
	if s.Currency == "" {
		s.Currency = defaultCurrency
	}
	s.Currency = strings.ToUpper(s.Currency)
	if s.AsOf.IsZero() {
		s.AsOf = time.Now().In(loc)
	}
	s.asOf = s.AsOf.Format(time.DateOnly)
	if len(s.Formats) == 0 {
		s.Formats = []string{"xlsx", "csv"}
	}
	for _, f := range s.Formats {
		if f != "xlsx" && f != "csv" {
			return nil, fmt.Errorf("format %q: want xlsx or csv", f)
		}
	}
	if s.OutDir == "" {
		return nil, errors.New("no output directory")
	}
	if s.Journal == "" && s.DB != "" {
		s.Journal = journalfile.DefaultPath(s.DB)
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	return s, nil
}

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
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
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
	if s.warnings, err = asOfWarnings(ctx, db, s); err != nil {
		return nil, nil, err
	}
	for _, w := range s.warnings {
		s.Log.Warn(w.text(nil))
	}
	if err := s.proveZone(ctx, db); err != nil {
		return nil, nil, err
	}
	return generateReports(ctx, db, s, defs)
}

// proveZone sets s.zone: the interval around the as-of date in which the time zone's offset is
// proven constant (proveFixedZone).
func (s *settings) proveZone(ctx context.Context, db *sql.DB) error {
	day, err := time.ParseInLocation(time.DateOnly, s.asOf, s.loc)
	if err != nil {
		return err
	}
	if s.zone, err = proveFixedZone(ctx, db, s.TZ, s.loc, day); err != nil {
		return err
	}
	if s.zone == nil {
		s.Log.Debug("time zone offsets not proven constant: dates converted by ICU", "tz", s.TZ)
	} else {
		s.Log.Debug("time zone offset proven constant", "tz", s.TZ, "from", s.zone.from, "until", s.zone.until, "offset", s.zone.offset)
	}
	return nil
}

// sheetParallelism is how many sheets are made at once, of one report or of several. A sheet
// alternates between a DuckDB query and writing its rows, single-threaded in Go; with two at
// once one writes while the other queries, so neither core idles. More would only add memory:
// each running sheet holds its query's result.
const sheetParallelism = 2

// shareCores gives each of the sheetParallelism sheets made at once its share of the cores as
// DuckDB threads: DuckDB's threads of two queries otherwise wait on and steal each other's
// tasks, for more CPU and no less time (docs/reports.md, Measured).
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
	if r.src, err = sources(ctx, conn, s); err != nil {
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
	r.base = filepath.Join(s.OutDir, fileBase(r.d, s))
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
		files = append(files, c.file.path)
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
		r.digest = digestOf(r.d, s, r.src, outs, r.same, files)
	}
	return files, nil
}

// openWarehouse opens the published warehouse read-only for reports.
func openWarehouse(ctx context.Context, path string) (*sql.DB, error) {
	return warehouse.OpenReadOnly(ctx, path)
}

// selectReports returns the named definitions in the order given, or all.
func selectReports(names []string) ([]*Definition, error) {
	all, err := Definitions()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return all, nil
	}
	var out []*Definition
	for _, n := range names {
		i := slices.IndexFunc(all, func(d *Definition) bool { return d.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("no report named %q (reports: %s)", n, strings.Join(reportNames(all), ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

func reportNames(defs []*Definition) []string {
	var n []string
	for _, d := range defs {
		n = append(n, d.Name)
	}
	return n
}

// CheckVars checks -var values before anything runs, for the reports named (all
// when none) or, with adhoc, for ad-hoc SQL: there any variable may be set, and
// the ones a report declares must suit it.
func CheckVars(names []string, vars map[string]string, adhoc bool) error {
	if !adhoc {
		defs, err := selectReports(names)
		if err != nil {
			return err
		}
		return checkVars(defs, vars)
	}
	defs, err := Definitions()
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range defs {
		if !slices.ContainsFunc(d.Vars, func(v Var) bool { _, ok := vars[v.Name]; return ok }) {
			continue
		}
		if err := d.checkValues(vars); err != nil {
			errs = append(errs, fmt.Errorf("as report %s uses them: %w", d.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkVars rejects a variable that none of the chosen reports declares, and a
// value a report cannot use: not of its type, outside a declared list or
// bounds, or out of order with the variable it must exceed.
func checkVars(defs []*Definition, vars map[string]string) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		known := false
		for _, d := range defs {
			known = known || slices.ContainsFunc(d.Vars, func(v Var) bool { return v.Name == name })
		}
		if !known {
			hint := ""
			if name == "as_of" || name == "tz" || name == "account" {
				hint = fmt.Sprintf(" (use -%s)", strings.ReplaceAll(name, "_", "-"))
			}
			errs = append(errs, fmt.Errorf("variable %s: none of the reports %s uses it%s", name, strings.Join(reportNames(defs), ", "), hint))
		}
	}
	for _, d := range defs {
		if err := d.checkValues(vars); err != nil {
			errs = append(errs, fmt.Errorf("report %s: %w", d.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkValues checks the values d's variables take with vars given (defaults
// for the rest).
func (d *Definition) checkValues(vars map[string]string) error {
	var errs []error
	ints := map[string]int64{}
	value := func(v Var) (string, bool) {
		if val, ok := vars[v.Name]; ok {
			return val, true
		}
		return v.Default, false
	}
	for _, v := range d.Vars {
		val, given := value(v)
		if val == "" {
			continue
		}
		src := "default"
		if given {
			src = "-var"
		}
		switch {
		case len(v.Values) > 0 && !slices.Contains(v.Values, val):
			errs = append(errs, fmt.Errorf("variable %s=%q (%s): want one of %s", v.Name, val, src, strings.Join(v.Values, ", ")))
			continue
		case v.Type == "DATE":
			if _, err := time.Parse(time.DateOnly, val); err != nil {
				errs = append(errs, fmt.Errorf("variable %s=%q (%s): want a date YYYY-MM-DD", v.Name, val, src))
			}
			continue
		case v.Type != "INTEGER":
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("variable %s=%q (%s): want a whole number", v.Name, val, src))
			continue
		}
		ints[v.Name] = n
		if v.Min != nil && n < *v.Min {
			errs = append(errs, fmt.Errorf("variable %s=%d (%s): must be at least %d (%s)", v.Name, n, src, *v.Min, v.Doc))
		}
		if v.Max != nil && n > *v.Max {
			errs = append(errs, fmt.Errorf("variable %s=%d (%s): must be at most %d (%s)", v.Name, n, src, *v.Max, v.Doc))
		}
	}
	for _, v := range d.Vars {
		n, ok := ints[v.Name]
		lower, lok := ints[v.Above]
		if v.Above == "" || !ok || !lok || n > lower {
			continue
		}
		errs = append(errs, fmt.Errorf("variable %s=%d must be above %s=%d: the buckets are ordered", v.Name, n, v.Above, lower))
	}
	return errors.Join(errs...)
}

// sheetOutput is what one data sheet produced, for the summary.
type sheetOutput struct {
	sheet *Sheet
	cols  []column
	rows  int
	check *checkResult
	total int // row number of the totals row in the workbook, 0 = none
	tot   *totals
	// headRows are the first rows of a headline sheet, for the summary.
	headRows [][]any
}

// setReportVars sets as_of, tz, account and the report's variables on conn
// and returns the values titles may use.
func setReportVars(ctx context.Context, conn *sql.Conn, s *settings, d *Definition) (map[string]string, error) {
	vals := map[string]string{"as_of": s.asOf, "tz": s.TZ, "currency": s.Currency}
	set := func(name, typ, v string) error {
		if err := setVar(ctx, conn, name, typ, v); err != nil {
			return fmt.Errorf("variable %w", err)
		}
		vals[name] = v
		return nil
	}
	if err := set("as_of", "DATE", s.asOf); err != nil {
		return nil, err
	}
	if err := set("tz", "VARCHAR", s.TZ); err != nil {
		return nil, err
	}
	if s.Account != "" {
		if err := set("account", "VARCHAR", s.Account); err != nil {
			return nil, err
		}
	}
	if s.zone != nil && s.zone.zone == s.TZ {
		if err := s.zone.setVars(ctx, conn); err != nil {
			return nil, fmt.Errorf("variable %w", err)
		}
	}
	for _, v := range d.Vars {
		val, ok := s.Vars[v.Name]
		if !ok {
			val = v.Default
		}
		if val == "" {
			continue // the query file's default applies
		}
		if err := set(v.Name, v.Type, val); err != nil {
			return nil, err
		}
	}
	return vals, nil
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
		if p := sh.PrintOnly; p != nil {
			i := slices.IndexFunc(out.cols, func(c column) bool { return c.name == p.Column })
			if i < 0 {
				return fmt.Errorf("%s: print_only: no column %s in the result", sh.Query, p.Column)
			}
			printed = func(v []any) bool { s, _ := v[i].(string); return slices.Contains(p.Values, s) }
		}
		if r.wb != nil {
			done.xs = newXLSXSheet(r.wb.f, r.wb.st, r.wb.loc, r.wb.l, sh.tab(s.Locale), out.cols, r.wb.footer)
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

// List prints every report with its sheets and variables.
func List(w io.Writer) error {
	defs, err := Definitions()
	if err != nil {
		return err
	}
	for _, d := range defs {
		fmt.Fprintf(w, "%s\t%s\n", d.Name, d.Title.In("en"))
		for _, s := range d.Sheets {
			fmt.Fprintf(w, "\tsheet %q\tqueries/%s\n", s.Name, s.Query)
		}
		for _, v := range d.Vars {
			def := v.Default
			if def == "" {
				def = "(query default)"
			}
			fmt.Fprintf(w, "\t-var %s=%s\t%s\n", v.Name, def, v.Doc)
		}
	}
	fmt.Fprintln(w, "every report also takes -as-of, -tz and -account")
	return nil
}
