package jobs

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// State is where an action stands; the journal keeps every transition.
type State string

// Action states. Sent is journaled before the request leaves, so a process killed mid-request leaves it
// sent: its outcome is unknown and it is reconciled by reading before anything is sent again.
const (
	Planned    State = "planned"     // stored with the plan, never sent
	Sent       State = "sent"        // request about to leave (or left); outcome not yet journaled
	Succeeded  State = "succeeded"   // the service confirmed it, or reconciliation found it applied
	Failed     State = "failed"      // the service refused it (4xx): never retried
	Unknown    State = "unknown"     // sent, outcome unknown (timeout, 5xx, reset); reconcile before any retry
	NotApplied State = "not_applied" // proven not applied (never left, 401/403/429, or reconciled absent): may be sent
	// Unresolved: reading could not prove whether it was applied. Never sent again automatically; a person
	// settles it with Journal.Resolve (syncer job resolve).
	Unresolved State = "unresolved"
)

// PlanOptions say what to plan.
type PlanOptions struct {
	Kind    Kind
	Input   string // .csv or .xlsx
	Account string // the warehouse account the rows refer to
	// SkipBlank is kept so existing command lines work: an email-fix row with a blank toEmail is always left out.
	SkipBlank bool
	// Again plans the file as a new job even when an identical plan exists (a repeated monthly top-up), and
	// lets every row repeat what billsync sent before (as repeat = yes on each row).
	Again bool
	// RepeatWindow is how far back a row is compared with what billsync sent; zero = DefaultRepeatWindow.
	RepeatWindow time.Duration

	Location *time.Location // zone of bare dates in the input and of the times in messages; nil = UTC
	Locale   string         // digit grouping of the change texts: id (default) or en
	Now      time.Time      // zero = time.Now()
	User     string         // zero = Login(), the OS account of this process's uid
	Host     string         // zero = the host name
}

// Plan is a validated, stored job.
type Plan struct {
	ID                string
	Kind              Kind
	Account           string
	Hash              string // sha256 of kind, account and every request
	Input             string
	InputSHA256       string
	CreatedAt         time.Time
	CreatedBy, Host   string
	WarehouseSyncedAt time.Time
	ApprovedAt        time.Time // zero when not approved
	ApprovedBy        string
	Approval          *Approval   // the latest approval with its target; nil when none recorded one
	Approvals         []*Approval // every approval with its target, oldest first
	Existing          bool        // planning found this identical plan already stored
	SkippedLines      []int       // email-fix lines left out because their toEmail is blank
	Again             bool        // planned with -again: every row may repeat what was sent before it was planned
	Actions           []*Action
	// start is the plan's first journal transition: sends journaled after it are ones the person did not see
	// when marking rows to repeat.
	start int64
}

// Action is one row of a plan with its latest journaled state.
type Action struct {
	Seq     int
	Line    int
	ID      string // idempotency key
	Target  string
	Change  string
	Request map[string]string
	Current map[string]string // warehouse values at plan time
	State   State
	Detail  map[string]string // response summary or reconciliation evidence
	Error   string
	Sends   int // times journaled as sent
	// AllowRepeat: the row may repeat what billsync sent before it was planned (repeat = yes, or -again).
	AllowRepeat bool
}

// Plan validates the input against the warehouse wh (opened read-only) and stores the plan. An input with any
// problem returns InputErrors and stores nothing. Planning sends nothing to the service.
func (j *Journal) Plan(ctx context.Context, wh *sql.DB, o PlanOptions) (*Plan, error) {
	s, err := kindOf(o.Kind)
	if err != nil {
		return nil, err
	}
	o.defaults()
	t, err := readTable(o.Input, func(h []string) bool { return len(missingColumns(s, h)) == 0 })
	if err != nil {
		return nil, err
	}
	p, err := buildPlan(ctx, s, t, wh, &o)
	if err != nil {
		return nil, err
	}
	if id, err := j.planIDByHash(ctx, p.Hash); err != nil {
		return nil, err
	} else if id != "" {
		old, err := j.LoadPlan(ctx, id)
		if err != nil {
			return nil, err
		}
		old.Existing, old.SkippedLines = true, p.SkippedLines
		return old, nil
	}
	if err := j.markRepeats(ctx, wh, s, p, &o); err != nil {
		return nil, err
	}
	if p.InputSHA256, err = fileSHA256(o.Input); err != nil {
		return nil, err
	}
	if err := j.storePlan(ctx, p); err != nil {
		return nil, fmt.Errorf("store plan: %w", err)
	}
	return p, nil
}

func (o *PlanOptions) defaults() {
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.RepeatWindow <= 0 {
		o.RepeatWindow = DefaultRepeatWindow
	}
	if o.User == "" {
		o.User = Login()
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
}

// missingColumns lists the required columns (and one-of groups) the header lacks.
func missingColumns(s kind, header []string) []string {
	have := map[string]bool{}
	for _, h := range header {
		have[canonical(h)] = true
	}
	var miss []string
	for _, c := range s.traits().columns {
		if c.required && !have[canonical(c.name)] {
			miss = append(miss, c.name)
		}
	}
	for _, g := range s.traits().oneOf {
		found := false
		for _, c := range g {
			found = found || have[canonical(c)]
		}
		if !found {
			miss = append(miss, strings.Join(g, " or "))
		}
	}
	return miss
}

func headerErrors(s kind, t *table) InputErrors {
	var errs InputErrors
	seen := map[string]int{}
	for i, h := range t.header {
		c := canonical(h)
		if c == "" {
			continue
		}
		if prev, dup := seen[c]; dup {
			errs = append(errs, &InputError{File: t.file, Sheet: t.sheet, Line: 1, Column: colName(i) + " (" + h + ")",
				Msg: fmt.Sprintf("column %q appears twice (also column %s)", h, colName(prev))})
		}
		seen[c] = i
	}
	if miss := missingColumns(s, t.header); len(miss) > 0 {
		errs = append(errs, &InputError{File: t.file, Sheet: t.sheet, Line: 1,
			Msg: fmt.Sprintf("wrong header for %s: missing column(s) %s; the header has %s", s.name(),
				strings.Join(miss, ", "), strings.Join(t.header, ", "))})
	}
	return errs
}

type plannedRow struct {
	r      *rowReader
	a      Args
	repeat bool
}

func buildPlan(ctx context.Context, s kind, t *table, wh *sql.DB, o *PlanOptions) (*Plan, error) {
	if errs := headerErrors(s, t); len(errs) > 0 {
		return nil, errs
	}
	pos := map[string]int{}
	for i, h := range t.header {
		pos[canonical(h)] = i
	}
	var errs InputErrors
	p := &Plan{Kind: s.name(), Account: o.Account, Input: o.Input, CreatedAt: o.Now.UTC(), CreatedBy: o.User, Host: o.Host,
		Again: o.Again}
	var rows []plannedRow
	var k keys
	for _, row := range t.rows {
		if blank(row.cells) {
			continue
		}
		r := &rowReader{t: t, row: row, pos: pos, errs: &errs, loc: o.Location, now: o.Now, units: s.traits().units,
			lang: langOf(o.Locale)}
		if extra := len(row.cells) - len(t.header); extra > 0 && !blank(row.cells[len(t.header):]) {
			r.fail("", "%d cells but the header has %d columns", len(row.cells), len(t.header))
		}
		a, ok := s.parse(r)
		repeat := repeatMark(r)
		if r.bad {
			continue
		}
		if !ok {
			p.SkippedLines = append(p.SkippedLines, row.line)
			continue
		}
		a.refs(&k)
		rows = append(rows, plannedRow{r, a, repeat || o.Again})
	}
	if len(errs) == 0 && len(rows) == 0 {
		if len(p.SkippedLines) > 0 {
			return nil, InputErrors{{File: t.file, Sheet: t.sheet, Msg: fmt.Sprintf(s.traits().allSkipped, len(p.SkippedLines))}}
		}
		return nil, InputErrors{{File: t.file, Sheet: t.sheet, Msg: "no data rows: nothing to do"}}
	}
	w, err := loadWorld(ctx, wh, o.Account, &k)
	if err != nil {
		return nil, err
	}
	w.syncedAt = w.syncedAt.In(o.Location) // messages name the sync in the configured zone
	p.WarehouseSyncedAt = w.syncedAt
	seen := map[string]int{}
	for _, pr := range rows {
		a, q, d := s.check(pr.a, w, pr.r)
		for _, d := range a.unique() {
			if first, dup := seen[d.key]; dup {
				pr.r.fail(d.col, "duplicate: %s is already on line %d", d.key, first)
			} else {
				seen[d.key] = pr.r.row.line
			}
		}
		if pr.r.bad {
			continue
		}
		p.Actions = append(p.Actions, &Action{Seq: len(p.Actions) + 1, Line: pr.r.row.line, Target: d.target,
			Change: d.change, Request: q, Current: d.current, State: Planned, AllowRepeat: pr.repeat})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	p.seal(o)
	return p, nil
}

// seal derives the plan hash, the plan id and every action's idempotency key from the content, so planning
// the same file again finds the same plan instead of making a second one.
func (p *Plan) seal(o *PlanOptions) {
	h := sha256.New()
	fmt.Fprintf(h, "billsync job plan v1\nkind=%s\naccount=%s\n", p.Kind, p.Account)
	if o.Again {
		fmt.Fprintf(h, "again=%d\n", o.Now.UnixNano())
	}
	for _, a := range p.Actions {
		b, _ := json.Marshal(a.Request) // map keys are sorted: the encoding is canonical
		h.Write(b)
		h.Write([]byte{'\n'})
		if a.AllowRepeat && !o.Again {
			h.Write([]byte("repeat\n")) // marking a row makes a new plan: the old one holds it
		}
	}
	p.Hash = hex.EncodeToString(h.Sum(nil))
	p.ID = p.Hash[:12]
	for _, a := range p.Actions {
		b, _ := json.Marshal(a.Request)
		sum := sha256.Sum256([]byte(p.Hash + "\n" + strconv.Itoa(a.Seq) + "\n" + string(b)))
		a.ID = hex.EncodeToString(sum[:16])
	}
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (j *Journal) planIDByHash(ctx context.Context, hash string) (string, error) {
	var id string
	err := j.db.QueryRowContext(ctx, journalSQL.Get("plan_id_by_hash"), hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("job journal: find plan: %w", err)
	}
	return id, nil
}

func (j *Journal) storePlan(ctx context.Context, p *Plan) error {
	return j.inTx(ctx, func(tx *sql.Tx) error {
		skipped, _ := json.Marshal(append([]int{}, p.SkippedLines...))
		if _, err := tx.ExecContext(ctx, journalSQL.Get("insert_plan"), p.ID, string(p.Kind), p.Account, p.Hash, p.Input,
			p.InputSHA256, len(p.Actions), p.CreatedAt, p.CreatedBy, p.Host, nullTime(p.WarehouseSyncedAt), p.Again,
			string(skipped)); err != nil {
			return err
		}
		for _, a := range p.Actions {
			req, _ := json.Marshal(a.Request)
			cur, _ := json.Marshal(a.Current)
			if _, err := tx.ExecContext(ctx, journalSQL.Get("insert_plan_action"), p.ID, a.Seq, a.Line, a.ID, a.Target,
				a.Change, string(req), string(cur), a.AllowRepeat); err != nil {
				return err
			}
			var det any // a held row says what it repeats; a row marked to repeat, what it will repeat
			if len(a.Detail) > 0 {
				b, _ := json.Marshal(a.Detail)
				det = string(b)
			}
			if _, err := tx.ExecContext(ctx, journalSQL.Get("insert_transition"), p.ID, a.ID, a.Seq, nil, string(a.State),
				p.CreatedAt, nil, det, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func nullTime(t time.Time) sql.NullTime { return sql.NullTime{Time: t, Valid: !t.IsZero()} }

// LoadPlan reads a stored plan with every action's latest state.
func (j *Journal) LoadPlan(ctx context.Context, id string) (*Plan, error) {
	p := &Plan{}
	var kind string
	var synced, approved sql.NullTime
	var skipped string
	err := j.db.QueryRowContext(ctx, journalSQL.Get("plan_by_id"), id).Scan(&p.ID, &kind, &p.Account, &p.Hash, &p.Input,
		&p.InputSHA256, &p.CreatedAt, &p.CreatedBy, &p.Host, &synced, &approved, &p.ApprovedBy, &p.Again, &skipped,
		&p.start)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no plan %q in the job journal %s", id, j.path)
	}
	if err != nil {
		return nil, fmt.Errorf("job journal: read plan %s: %w", id, err)
	}
	p.Kind, p.WarehouseSyncedAt, p.ApprovedAt = Kind(kind), synced.Time, approved.Time
	if p.Approvals, err = j.approvals(ctx, id); err != nil {
		return nil, err
	}
	if n := len(p.Approvals); n > 0 {
		p.Approval = p.Approvals[n-1]
	}
	if err := json.Unmarshal([]byte(skipped), &p.SkippedLines); err != nil {
		return nil, fmt.Errorf("job journal: plan %s: skipped lines: %w", id, err)
	}
	err = queryEach(ctx, j.db, journalSQL.Get("plan_actions"), func(r *sql.Rows) error {
		a := &Action{}
		var req, cur, detail, state string
		if err := r.Scan(&a.Seq, &a.Line, &a.ID, &a.Target, &a.Change, &req, &cur, &state, &detail, &a.Error,
			&a.Sends, &a.AllowRepeat); err != nil {
			return err
		}
		a.State = State(state)
		for _, f := range []struct {
			s string
			m *map[string]string
		}{{req, &a.Request}, {cur, &a.Current}, {detail, &a.Detail}} {
			if err := json.Unmarshal([]byte(f.s), f.m); err != nil {
				return fmt.Errorf("action %d: %w", a.Seq, err)
			}
		}
		p.Actions = append(p.Actions, a)
		return nil
	}, id)
	if err != nil {
		return nil, fmt.Errorf("job journal: read actions of plan %s: %w", id, err)
	}
	return p, nil
}

// PlanSummary is one line of the plan list.
type PlanSummary struct {
	ID        string
	Kind      Kind
	Account   string
	CreatedAt time.Time
	CreatedBy string
	Approved  bool
	Actions   int
	Counts
}

// Plans lists the stored plans, newest first.
func (j *Journal) Plans(ctx context.Context) ([]PlanSummary, error) {
	var out []PlanSummary
	err := queryEach(ctx, j.db, journalSQL.Get("list_plans"), func(r *sql.Rows) error {
		var s PlanSummary
		var kind string
		err := r.Scan(&s.ID, &kind, &s.Account, &s.CreatedAt, &s.CreatedBy, &s.Approved, &s.Actions, &s.Planned,
			&s.Held, &s.Sent, &s.Succeeded, &s.Failed, &s.Unresolved, &s.Skipped)
		s.Kind = Kind(kind)
		out = append(out, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("job journal: list plans: %w", err)
	}
	return out, nil
}
