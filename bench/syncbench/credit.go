package main

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/sandbox"
)

//go:embed credit_reads.sql
var creditReadsSQL string

// serveLedgerTruth answers /__bench/ledger with every credit-ledger entry the simulator holds
// (id, customer, createdAt): the truth the warehouse's credit is compared with.
func serveLedgerTruth(sb *sandbox.Server) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		var out []ledgerTruth
		for _, raw := range sb.Dump("credit_ledger") {
			var l ledgerTruth
			if err := json.Unmarshal(raw, &l); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			out = append(out, l)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	}
}

type ledgerTruth struct {
	ID         string    `json:"id"`
	CustomerID string    `json:"customerId"`
	CreatedAt  time.Time `json:"createdAt"`
}

// creditStats is what a run's credit fan-out bought: reads, reads that found an entry the
// warehouse did not hold, and how stale customers' credit is afterwards, both as the time since
// each customer's last read (what the bounds limit) and as the age of the oldest entry the
// simulator holds that the warehouse lacks (what an analyst would miss).
type creditStats struct {
	reads, hits            int64
	customers, neverRead   int
	readAgeMax, readAgeP95 time.Duration
	missing                int // customers whose credit lacks an entry the simulator holds
	missedMax, missedP95   time.Duration
	entriesMissed          int
	byReason               []reasonHits
}

// reasonHits is one reason's share of a run's credit reads (credit_fetch_state.reason).
type reasonHits struct {
	reason           string
	due, reads, hits int64
}

func (r reasonHits) String() string {
	s := fmt.Sprintf("%s %d", r.reason, r.reads)
	if r.due != r.reads {
		s += fmt.Sprintf(" of %d", r.due)
	}
	if r.reads > 0 {
		s += fmt.Sprintf(" (%.0f%% hit)", 100*float64(r.hits)/float64(r.reads))
	}
	return s
}

func (s creditStats) String() string {
	rate := "-"
	if s.reads > 0 {
		rate = fmt.Sprintf("%.0f%%", 100*float64(s.hits)/float64(s.reads))
	}
	return fmt.Sprintf("credit: %d reads, %d found a new entry (%s); since last read max %s p95 %s (%d never read); "+
		"%d of %d customers lack %d entries, oldest missing max %s p95 %s\n         read by reason: %s",
		s.reads, s.hits, rate, days(s.readAgeMax), days(s.readAgeP95), s.neverRead,
		s.missing, s.customers, s.entriesMissed, days(s.missedMax), days(s.missedP95), reasonsString(s.byReason))
}

func reasonsString(rs []reasonHits) string {
	if len(rs) == 0 {
		return "-"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

func days(d time.Duration) string { return fmt.Sprintf("%.1fd", d.Hours()/24) }

// measureCredit reads the published warehouse at path (read-only) after run runID and compares
// it with the simulator at base.
// due is the syncer's own count of the customers due, by reason, most important first.
// best gathers what the simulator's ledger did, for the ceiling over the runs of one scale.
func measureCredit(ctx context.Context, base, path string, runID int64, due []fetch.ReasonReads, best *ceiling) (creditStats, error) {
	var st creditStats
	now, err := simNow(base)
	if err != nil {
		return st, err
	}
	truth, err := fetchTruth(base)
	if err != nil {
		return st, err
	}
	db, err := duckfile.OpenReadOnly(path)
	if err != nil {
		return st, err
	}
	defer db.Close()
	if st.byReason, err = readsByReason(ctx, db, runID, due); err != nil {
		return st, fmt.Errorf("credit reads of run %d: %w", runID, err)
	}
	for _, r := range st.byReason {
		st.reads += r.reads
		st.hits += r.hits
	}
	rows, err := db.QueryContext(ctx, `SELECT c.id, f.last_fetched_at FROM customers c
		LEFT JOIN credit_fetch_state f ON f.account = c.account AND f.customer_id = c.id
		WHERE c.deleted_upstream_at IS NULL`)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	var ages []time.Duration
	live := map[string]bool{}
	for rows.Next() {
		var id string
		var last sql.NullTime
		if err := rows.Scan(&id, &last); err != nil {
			return st, err
		}
		live[id] = true
		if !last.Valid {
			st.neverRead++
			continue
		}
		ages = append(ages, now.Sub(last.Time))
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	st.customers = len(live)
	st.readAgeMax, st.readAgeP95 = maxP95(ages)

	have := map[string]bool{}
	ids, err := db.QueryContext(ctx, `SELECT id FROM credit_ledger`)
	if err != nil {
		return st, err
	}
	defer ids.Close()
	for ids.Next() {
		var id string
		if err := ids.Scan(&id); err != nil {
			return st, err
		}
		have[id] = true
	}
	if err := ids.Err(); err != nil {
		return st, err
	}
	oldest := map[string]time.Time{}
	for _, l := range truth {
		if have[l.ID] || !live[l.CustomerID] {
			continue
		}
		st.entriesMissed++
		if o, ok := oldest[l.CustomerID]; !ok || l.CreatedAt.Before(o) {
			oldest[l.CustomerID] = l.CreatedAt
		}
	}
	st.missing = len(oldest)
	best.add(now, live, truth)
	lags := make([]time.Duration, 0, len(live))
	for id := range live {
		if o, ok := oldest[id]; ok {
			lags = append(lags, now.Sub(o))
		} else {
			lags = append(lags, 0)
		}
	}
	st.missedMax, st.missedP95 = maxP95(lags)
	return st, nil
}

func maxP95(ds []time.Duration) (time.Duration, time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)-1], ds[(len(ds)*95+99)/100-1]
}

func simNow(base string) (time.Time, error) {
	resp, err := http.Get(base + "/__sandbox/now")
	if err != nil {
		return time.Time{}, err
	}
	defer resp.Body.Close()
	var v struct {
		NowMs int64 `json:"nowMs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return time.Time{}, fmt.Errorf("the simulator's clock: %w", err)
	}
	return time.UnixMilli(v.NowMs).UTC(), nil
}

func fetchTruth(base string) ([]ledgerTruth, error) {
	resp, err := http.Get(base + "/__bench/ledger")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []ledgerTruth
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("the simulator's ledger: %w", err)
	}
	return out, nil
}

// creditPeriods adds up the credit reads of the nightly runs (every run after the first sync)
// per refresh period, what an operator's week of runs costs at the service's rate limit and
// whether its nights are level, and over all of them.
type creditPeriods struct {
	runsPer     int // nightly runs per period: the refresh bound over the time between runs
	period, all creditTotal
}

// creditTotal is the credit reads of consecutive runs first..last.
type creditTotal struct {
	first, last int
	reads, hits int64
	least, most int64
	staleMax    time.Duration
}

// requestsPerMin is the real service's rate limit (BILLSYNC_RATE_PER_MIN's default): what a
// night's reads cost in time.
const requestsPerMin = 20

func newCreditPeriods(refresh, advance time.Duration) *creditPeriods {
	return &creditPeriods{runsPer: max(1, int((refresh+advance/2)/advance))}
}

func (t *creditTotal) add(run int, cs creditStats) {
	if t.first == 0 {
		t.first, t.least = run, cs.reads
	}
	t.last = run
	t.reads += cs.reads
	t.hits += cs.hits
	t.least, t.most = min(t.least, cs.reads), max(t.most, cs.reads)
	t.staleMax = max(t.staleMax, cs.readAgeMax)
}

func (t creditTotal) line(what string) string {
	rate := "-"
	if t.reads > 0 {
		rate = fmt.Sprintf("%.0f%%", 100*float64(t.hits)/float64(t.reads))
	}
	n := t.last - t.first + 1
	return fmt.Sprintf("credit, runs %d-%d (%s): %d reads, %d found a new entry (%s); a night %d-%d reads, mean %.0f "+
		"(the most %.0f min at %d requests/minute); since last read max %s",
		t.first, t.last, what, t.reads, t.hits, rate, t.least, t.most, float64(t.reads)/float64(n),
		float64(t.most)/requestsPerMin, requestsPerMin, days(t.staleMax))
}

// add counts run's figures and returns the period's line when run completes one, else "".
func (p *creditPeriods) add(run int, cs creditStats) string {
	if run < 2 {
		return "" // the first sync reads every customer once: not a night's work
	}
	p.period.add(run, cs)
	p.all.add(run, cs)
	if p.period.last-p.period.first+1 < p.runsPer {
		return ""
	}
	line := p.period.line("one refresh period")
	p.period = creditTotal{}
	return line
}

// line is the ceiling's line for the nightly runs counted so far ("" before any).
func (c *ceiling) line() string {
	if c.run < 2 {
		return ""
	}
	hits, reads := c.best()
	rate := "-"
	if reads > 0 {
		rate = fmt.Sprintf("%.0f%%", 100*float64(hits)/float64(reads))
	}
	return fmt.Sprintf("credit, runs 2-%d, the ceiling: the order of reads that finds an entry in the largest share of "+
		"its reads while keeping the bound, knowing when each customer's credit moves: %d reads, %d found an entry (%s)",
		c.run, reads, hits, rate)
}

// total is the line for every nightly run so far ("" before any).
func (p *creditPeriods) total() string {
	if p.all.first == 0 {
		return ""
	}
	return p.all.line("every nightly run")
}

// readsByReason reads run runID's credit reads and hits per reason, in the order of due, then
// any reason due did not name (none, for reads recorded before reasons were).
func readsByReason(ctx context.Context, db *sql.DB, runID int64, due []fetch.ReasonReads) ([]reasonHits, error) {
	var out []reasonHits
	at := map[string]int{}
	for _, d := range due {
		at[d.Reason] = len(out)
		out = append(out, reasonHits{reason: d.Reason, due: int64(d.Due)})
	}
	rows, err := db.QueryContext(ctx, creditReadsSQL, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r reasonHits
		if err := rows.Scan(&r.reason, &r.reads, &r.hits); err != nil {
			return nil, err
		}
		i, ok := at[r.reason]
		if !ok {
			i = len(out)
			at[r.reason] = i
			out = append(out, reasonHits{reason: r.reason, due: r.reads})
		}
		out[i].reads, out[i].hits = r.reads, r.hits
	}
	return out, rows.Err()
}

// ceiling gathers, run by run, when each customer's credit moved and while it was live, so that
// best can work out the largest share of credit reads that find an entry which any order of reads
// keeping the bound could reach over the nightly runs, knowing the future. It is generous to that
// order: a customer first seen after the first sync counts as read the night before, for free,
// and its first read may wait up to the bound; a customer no longer live needs no read after.
type ceiling struct {
	k     int       // the bound in runs: the most runs between two reads of a customer
	run   int       // the last run counted (1 is the first sync, which reads everyone)
	prev  time.Time // the simulator's clock at that run
	lives map[string]*creditLife
}

// creditLife is one customer's part in the ceiling.
type creditLife struct {
	start int   // the run of its last read before the nightly runs (for a later customer, the run before it was first seen)
	end   int   // the last run it was live in
	moved []int // the runs whose night its credit moved in (an entry created after the run before, up to this one), ascending
}

func newCeiling(bound, advance time.Duration) *ceiling {
	return &ceiling{k: max(1, int(bound/advance)), lives: map[string]*creditLife{}}
}

// add counts one run, at the simulator's time now, given the customers live after it and every
// ledger entry the simulator holds.
func (c *ceiling) add(now time.Time, live map[string]bool, truth []ledgerTruth) {
	c.run++
	for id := range live {
		l := c.lives[id]
		if l == nil {
			l = &creditLife{start: max(1, c.run-1)}
			c.lives[id] = l
		}
		l.end = c.run
	}
	if c.run > 1 {
		for _, e := range truth {
			l := c.lives[e.CustomerID]
			if l != nil && e.CreatedAt.After(c.prev) && !e.CreatedAt.After(now) && l.start < c.run &&
				(len(l.moved) == 0 || l.moved[len(l.moved)-1] != c.run) {
				l.moved = append(l.moved, c.run)
			}
		}
	}
	c.prev = now
}

// best is the reads that find an entry, and the reads, of the order of reads over runs 2 to the
// last that finds an entry in the largest share of its reads while reading every live customer at
// least once every k runs. A read whose window (the nights since the customer's read before) holds
// two nights its credit moved in can be split in two that both find an entry, which never lowers a
// share below one: so that order finds every night's movement with a read of its own, with the
// fewest reads the bound then allows, customer by customer.
func (c *ceiling) best() (hits, reads int64) {
	for _, l := range c.lives {
		h, r := l.best(c.k, c.run)
		hits += int64(h)
		reads += int64(r)
	}
	return hits, reads
}

// best is the customer's part of the ceiling's order of reads (a dynamic programme over its runs:
// the most reads that find an entry, then the fewest reads); last is the last run.
func (l *creditLife) best(k, last int) (hits, reads int) {
	// the last read must keep the customer within the bound at the next run, or, if it was
	// deleted, at the last run it was live in
	need := l.end
	if l.end == last {
		need = last + 1
	}
	if len(l.moved) == 0 { // no read can find anything: the fewest reads the bound allows
		return 0, max(0, (need-l.start+k-1)/k-1)
	}
	n := l.end - l.start + 1 // runs start..end, by offset from start
	type state struct {
		h, r int
		ok   bool
	}
	better := func(a, b state) bool { return !b.ok || a.h > b.h || (a.h == b.h && a.r < b.r) }
	f := make([]state, n) // the best order of reads ending with a read at each run
	f[0] = state{ok: true}
	lm := make([]int, n) // the latest run up to each one whose night the credit moved in
	for i, m := 1, 0; i < n; i++ {
		for m < len(l.moved) && l.moved[m] <= l.start+i {
			m++
		}
		if m > 0 {
			lm[i] = l.moved[m-1]
		}
	}
	for i := 1; i < n; i++ {
		for p := max(0, i-k); p < i; p++ {
			if !f[p].ok {
				continue
			}
			s := state{h: f[p].h, r: f[p].r + 1, ok: true}
			if lm[i] > l.start+p { // the credit moved since the read at p
				s.h++
			}
			if better(s, f[i]) {
				f[i] = s
			}
		}
	}
	var out state
	for p := max(0, need-k-l.start); p < n; p++ {
		if f[p].ok && better(f[p], out) {
			out = f[p]
		}
	}
	return out.h, out.r
}
