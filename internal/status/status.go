// Package status is where things stand, in one view an operator reads (syncer status): each
// account's latest sync and the next, how fresh each table is, the deliveries and their latest
// outcome, job rows waiting for a person, the alerts active. It reads the published warehouse,
// the two journals (read-only) and the syncer's state file, whether or not a daemon runs, and
// says what needs a person so a monitor can act on the exit status.
package status

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/sqlfile"
)

//go:embed status.sql
var sqlFS embed.FS

var stmts = sqlfile.MustLoad(sqlFS, "status.sql", "last_runs", "freshness", "job_waiting", "deliveries_last", "alerts_active")

// Sources are the files status reads and the settings it judges them by.
type Sources struct {
	DB              string // the published warehouse
	JobJournal      string
	DeliveryJournal string
	State           string // the syncer's state file (StatePath)
	// Next is the schedule's next tick after a time; nil when there is no schedule to tell.
	Next func(time.Time) time.Time
	// Deliveries are the schedule file's deliveries, each with its next occurrence after a time.
	Deliveries []ScheduledDelivery
	// StaleAfter: a table whose last complete read is older needs a person (BILLSYNC_ALERT_NO_SYNC).
	StaleAfter time.Duration
	// ApprovalWindow: a plan nobody approved is listed as waiting while it is younger.
	ApprovalWindow time.Duration
	Now            time.Time
}

// ScheduledDelivery is one delivery of the schedule file, as status needs it.
type ScheduledDelivery struct {
	Name string
	Next func(time.Time) time.Time
}

// Report is the view. Its times are instants; the text form shows them in the operator's zone.
type Report struct {
	At         time.Time       `json:"at"`
	Syncer     *Syncer         `json:"syncer"`
	Accounts   []Account       `json:"accounts"`
	Tables     []Table         `json:"tables"`
	Deliveries []Delivery      `json:"deliveries"`
	Jobs       []JobWaiting    `json:"jobs_waiting"`
	Alerts     []Alert         `json:"alerts_active"`
	Unreadable []string        `json:"unreadable,omitempty"` // sources that could not be read, and why
	Needs      []string        `json:"needs_a_person"`       // what a person must look at; empty when all is well
	sources    map[string]bool // which sources were read
}

// Syncer is the syncer process as its state file tells it.
type Syncer struct {
	Mode         string    `json:"mode,omitempty"` // daemon, once; "" when no syncer ran here yet
	PID          int       `json:"pid,omitempty"`
	Running      bool      `json:"running"` // the process is alive and has not stopped
	StartedAt    time.Time `json:"started_at,omitzero"`
	StoppedAt    time.Time `json:"stopped_at,omitzero"`
	RunningSince time.Time `json:"sync_running_since,omitzero"`
	NextRun      time.Time `json:"next_run,omitzero"`
}

// Account is one account's latest sync.
type Account struct {
	Name string `json:"name"`
	// Published is the newest run the warehouse holds; Attempt the latest attempt, which may have
	// failed and published nothing.
	Published *Run `json:"published,omitempty"`
	Attempt   *Run `json:"latest_attempt,omitempty"`
}

// Run is one sync run of an account.
type Run struct {
	ID         int64     `json:"id,omitempty"`
	Status     string    `json:"status"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Records    int64     `json:"records"`
	Problem    string    `json:"problem,omitempty"`
	Lake       string    `json:"lake,omitempty"` // the run's lake commit (state file only)
	// LakeBehind: published runs in a row the lake did not take, with the latest error.
	LakeBehind      int       `json:"lake_behind_runs,omitempty"`
	LakeError       string    `json:"lake_error,omitempty"`
	LakeBehindSince time.Time `json:"lake_behind_since,omitzero"`
}

// Table is how fresh one entity of one account is.
type Table struct {
	Account      string        `json:"account"`
	Entity       string        `json:"entity"`
	LastComplete time.Time     `json:"last_complete_at"`
	Records      int64         `json:"records"`
	Age          time.Duration `json:"age_seconds"`
	Stale        bool          `json:"stale"`
}

// Delivery is one delivery of the schedule file (or of the journal only, when the file no longer
// declares it) with its next occurrence and its newest journal row.
type Delivery struct {
	Name      string    `json:"name"`
	Next      time.Time `json:"next,omitzero"`
	LastAsOf  string    `json:"last_as_of,omitempty"`
	LastKind  string    `json:"last_kind,omitempty"`
	LastState string    `json:"last_state,omitempty"` // as the delivery journal says: sent, failed, unknown, ...
	LastAt    time.Time `json:"last_at,omitzero"`
	Error     string    `json:"error,omitempty"`
	Stale     string    `json:"stale,omitempty"`
}

// JobWaiting is a plan with rows waiting for a person.
type JobWaiting struct {
	Plan       string    `json:"plan"`
	Kind       string    `json:"kind"`
	Account    string    `json:"account"`
	CreatedAt  time.Time `json:"created_at"`
	CreatedBy  string    `json:"created_by"`
	Approved   bool      `json:"approved"`
	Unresolved int       `json:"unresolved"`   // a person settles them: syncer job resolve
	Unsettled  int       `json:"sent_unknown"` // the next apply reads the service to settle them
	// ToSend are rows still to send on a plan nobody approved (planned within the approval
	// window): listed, not a need, since a dry run that nobody follows up is a person's choice.
	ToSend int `json:"to_send"`
}

// Alert is a problem the daemon's alerts see as present.
type Alert struct {
	Key    string    `json:"key"`
	What   string    `json:"what"`
	Detail string    `json:"detail,omitempty"`
	Since  time.Time `json:"since"`
}

// Gather reads every source. A source that is missing or cannot be read is said in the report
// (Unreadable, and a need when it should exist); Gather fails only when nothing can be read.
func Gather(ctx context.Context, src Sources) (*Report, error) {
	if src.Now.IsZero() {
		src.Now = time.Now()
	}
	r := &Report{At: src.Now, sources: map[string]bool{}}
	st, err := ReadState(src.State)
	if err != nil {
		r.Unreadable = append(r.Unreadable, err.Error())
	}
	r.Syncer = syncerOf(st, src)

	db, err := duckfile.Open("", duckfile.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the attachments belong to the connection
	// the handle reaches these three files, read-only, and nothing else (docs/warehouse.md)
	if err := duckfile.Confine(ctx, db, duckfile.Confinement{Files: []string{src.DB, src.JobJournal, src.DeliveryJournal}}); err != nil {
		return nil, err
	}
	// Each source is attached, read and detached in turn: a writer (the daemon's journals, syncer
	// job) cannot open a file while a reader holds it, so none is held longer than its queries.
	read := func(alias, path, what string, fn func() error) {
		ok, err := attach(ctx, db, alias, path)
		switch {
		case err != nil:
			r.Unreadable = append(r.Unreadable, fmt.Sprintf("%s %s: %v", what, path, err))
			return
		case !ok:
			return
		}
		r.sources[alias] = true
		if err := fn(); err != nil {
			r.Unreadable = append(r.Unreadable, fmt.Sprintf("%s %s: %v", what, path, err))
		}
		if _, err := db.ExecContext(ctx, "DETACH "+alias); err != nil {
			r.Unreadable = append(r.Unreadable, fmt.Sprintf("%s %s: %v", what, path, err))
		}
	}
	read("wh", src.DB, "warehouse", func() error { return r.readWarehouse(ctx, db, src) })
	r.addAttempts(st)
	read("jobs", src.JobJournal, "job journal", func() error { return r.readJobs(ctx, db, src) })
	r.addScheduled(src)
	read("dl", src.DeliveryJournal, "delivery journal", func() error { return r.readDeliveries(ctx, db) })
	r.judge(src)
	return r, nil
}

// attach attaches the DuckDB file at path read-only as alias; false when it does not exist. A
// journal a writer holds this moment is tried again for a few seconds: writers hold them briefly.
func attach(ctx context.Context, db *sql.DB, alias, path string) (bool, error) {
	if path == "" {
		return false, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	stmt := fmt.Sprintf("ATTACH %s AS %s (READ_ONLY)", duckfile.QuoteLiteral(path), alias)
	var err error
	for wait := 50 * time.Millisecond; ; wait *= 2 {
		if _, err = db.ExecContext(ctx, stmt); err == nil {
			return true, nil
		}
		if !strings.Contains(err.Error(), "lock") || wait > 2*time.Second {
			return false, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func syncerOf(st *State, src Sources) *Syncer {
	s := &Syncer{}
	if st != nil {
		s.Mode, s.PID, s.StartedAt, s.StoppedAt = st.Mode, st.PID, st.StartedAt, st.StoppedAt
		s.Running = st.StoppedAt.IsZero() && alive(st.PID)
		if s.Running {
			s.RunningSince = st.RunningSince
			s.NextRun = st.NextRun
		}
	}
	if s.NextRun.IsZero() && src.Next != nil {
		// No daemon runs: the schedule says when one would run next.
		s.NextRun = src.Next(src.Now)
	}
	return s
}

func (r *Report) readWarehouse(ctx context.Context, db *sql.DB, src Sources) error {
	rows, err := db.QueryContext(ctx, stmts.Get("last_runs"))
	if err != nil {
		return err
	}
	for rows.Next() {
		var a Account
		var run Run
		var finished sql.NullTime
		if err := rows.Scan(&a.Name, &run.ID, &run.Status, &run.StartedAt, &finished, &run.Records, &run.Problem); err != nil {
			rows.Close()
			return err
		}
		run.FinishedAt = finished.Time
		a.Published = &run
		r.Accounts = append(r.Accounts, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.QueryContext(ctx, stmts.Get("freshness"))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t Table
		if err := rows.Scan(&t.Account, &t.Entity, &t.LastComplete, &t.Records); err != nil {
			return err
		}
		t.Age = src.Now.Sub(t.LastComplete)
		t.Stale = src.StaleAfter > 0 && t.Age > src.StaleAfter
		r.Tables = append(r.Tables, t)
	}
	return rows.Err()
}

// addAttempts adds each account's latest attempt from the state file, and the accounts only it knows.
func (r *Report) addAttempts(st *State) {
	if st == nil {
		return
	}
	names := make([]string, 0, len(st.Attempts))
	for n := range st.Attempts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		at := st.Attempts[n]
		run := &Run{ID: at.RunID, Status: at.Status, StartedAt: at.StartedAt, FinishedAt: at.FinishedAt,
			Records: at.Records, Problem: at.Error, Lake: at.Lake, LakeBehind: at.LakeBehind, LakeError: at.LakeError,
			LakeBehindSince: at.LakeBehindSince}
		found := false
		for i := range r.Accounts {
			if r.Accounts[i].Name == n {
				r.Accounts[i].Attempt, found = run, true
			}
		}
		if !found {
			r.Accounts = append(r.Accounts, Account{Name: n, Attempt: run})
		}
	}
	sort.Slice(r.Accounts, func(i, j int) bool { return r.Accounts[i].Name < r.Accounts[j].Name })
}

func (r *Report) readJobs(ctx context.Context, db *sql.DB, src Sources) error {
	since := src.Now.Add(-src.ApprovalWindow)
	rows, err := db.QueryContext(ctx, stmts.Get("job_waiting"), since)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var j JobWaiting
		if err := rows.Scan(&j.Plan, &j.Kind, &j.Account, &j.CreatedAt, &j.CreatedBy, &j.Approved,
			&j.Unresolved, &j.Unsettled, &j.ToSend); err != nil {
			return err
		}
		if j.Approved {
			j.ToSend = 0 // the daemon or the next apply sends them: nothing for a person
		}
		r.Jobs = append(r.Jobs, j)
	}
	return rows.Err()
}

// addScheduled lists the schedule file's deliveries with their next occurrence.
func (r *Report) addScheduled(src Sources) {
	for _, d := range src.Deliveries {
		r.Deliveries = append(r.Deliveries, Delivery{Name: d.Name, Next: d.Next(src.Now)})
	}
}

func (r *Report) readDeliveries(ctx context.Context, db *sql.DB) error {
	byName := map[string]*Delivery{}
	for i := range r.Deliveries {
		byName[r.Deliveries[i].Name] = &r.Deliveries[i]
	}
	rows, err := db.QueryContext(ctx, stmts.Get("deliveries_last"))
	if err != nil {
		return err
	}
	for rows.Next() {
		var d Delivery
		if err := rows.Scan(&d.Name, &d.LastAsOf, &d.LastKind, &d.LastState, &d.LastAt, &d.Error, &d.Stale); err != nil {
			rows.Close()
			return err
		}
		if have := byName[d.Name]; have != nil {
			d.Next = have.Next
			*have = d
		} else {
			r.Deliveries = append(r.Deliveries, d)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.QueryContext(ctx, stmts.Get("alerts_active"))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a Alert
		if err := rows.Scan(&a.Key, &a.What, &a.Detail, &a.Since); err != nil {
			return err
		}
		r.Alerts = append(r.Alerts, a)
	}
	return rows.Err()
}

// judge lists what needs a person.
func (r *Report) judge(src Sources) {
	need := func(format string, args ...any) { r.Needs = append(r.Needs, fmt.Sprintf(format, args...)) }
	if !r.sources["wh"] {
		if r.Syncer.Running && !r.Syncer.RunningSince.IsZero() {
			// a first sync under way: nothing to serve yet, and nothing wrong
		} else {
			need("no published warehouse at %s: no sync has succeeded yet", src.DB)
		}
	}
	for _, a := range r.Accounts {
		switch {
		case a.Attempt != nil && a.Attempt.Status == "failed":
			need("account %s: the latest sync failed: %s", a.Name, strings.TrimPrefix(a.Attempt.Problem, "account "+a.Name+": "))
		case a.Attempt != nil && a.Attempt.Status == "partial", a.Attempt == nil && a.Published != nil && a.Published.Status == "partial":
			need("account %s: the latest sync was partial", a.Name)
		}
		if a.Attempt != nil && a.Attempt.LakeBehind > 0 {
			// the sync itself published: the lake is behind until a run commits it
			need("account %s: the lake is behind the published warehouse by %s: %s; the next run commits what is missing",
				a.Name, runs(a.Attempt.LakeBehind), a.Attempt.LakeError)
		}
	}
	stale := 0
	for _, t := range r.Tables {
		if t.Stale {
			stale++
		}
	}
	if stale > 0 {
		need("%d tables not read completely for more than %s", stale, src.StaleAfter)
	}
	for _, d := range r.Deliveries {
		switch d.LastState {
		case "failed", "refused", "unknown":
			need("delivery %s (as of %s): %s", d.Name, d.LastAsOf, d.LastState)
		}
	}
	for _, j := range r.Jobs {
		switch {
		case j.Unresolved > 0:
			need("plan %s: %d rows unresolved (syncer job resolve)", j.Plan, j.Unresolved)
		case j.Unsettled > 0:
			need("plan %s: %d rows sent without a known outcome (syncer job apply %s reads the service)", j.Plan, j.Unsettled, j.Plan)
		}
	}
	for _, a := range r.Alerts {
		need("alert %s: %s", a.Key, a.What)
	}
	r.Needs = append(r.Needs, r.Unreadable...)
}

// Exit codes of syncer status, for monitors (docs/operations.md).
const (
	ExitOK          = 0 // nothing needs a person
	ExitNeeds       = 3 // something needs a person: Needs says what
	ExitNoWarehouse = 4 // no sync has published a warehouse yet (and none is under way)
)

// ExitCode is the exit status syncer status ends with.
func (r *Report) ExitCode() int {
	switch {
	case len(r.Needs) == 0:
		return ExitOK
	case !r.sources["wh"] && len(r.Needs) == 1:
		return ExitNoWarehouse
	}
	return ExitNeeds
}
