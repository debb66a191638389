package jobs

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

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

// markRepeats holds the rows of a new plan that repeat an earlier send, by billsync's journal or by the
// service's own records as synced into the warehouse wh (traces.go), and notes on the rows marked to repeat
// what they repeat.
func (j *Journal) markRepeats(ctx context.Context, wh *sql.DB, s kind, p *Plan, o *PlanOptions) error {
	rp, err := loadRepeats(ctx, j.db, s, p.Account, p.ID, o.Now.Add(-o.RepeatWindow), o.Location)
	if err != nil {
		return err
	}
	qs := make([]request, len(p.Actions))
	for i, a := range p.Actions {
		qs[i] = a.Request
	}
	ts, err := loadTraces(ctx, wh, s.traces(), p.Account, qs, o.Now.Add(-o.RepeatWindow-clockMargin), o.Location)
	if err != nil {
		return err
	}
	for _, a := range p.Actions {
		found := traceFilter{}.keep(ts.of(a.Request))
		if d := rp.hold(a, 0, o.RepeatWindow); d != nil || (len(found) > 0 && !a.AllowRepeat) {
			a.State, a.Detail = Held, holdByTraces(d, found, o.RepeatWindow, o.Location)
			continue
		}
		var d map[string]string
		if e, n, ok := rp.match(a.Request, 0); ok {
			d = rp.detail(e, n) // marked to repeat: sent, and the plan says what it repeats
		}
		if d = holdByTraces(d, found, o.RepeatWindow, o.Location); d != nil {
			delete(d, "held")
			a.Detail = d
		}
	}
	return nil
}
