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
	best                   ceilingNight // what a reader that knew when credit moved would have read
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
	best := ""
	if !s.best.firstSync {
		best = "\n         " + s.best.String()
	}
	return fmt.Sprintf("credit: %d reads, %d found a new entry (%s); since last read max %s p95 %s (%d never read); "+
		"%d of %d customers lack %d entries, oldest missing max %s p95 %s\n         read by reason: %s%s",
		s.reads, s.hits, rate, days(s.readAgeMax), days(s.readAgeP95), s.neverRead,
		s.missing, s.customers, s.entriesMissed, days(s.missedMax), days(s.missedP95), reasonsString(s.byReason), best)
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
// best is the reader that knows when credit moved, kept across the runs of one scale.
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
	st.best = best.night(now, live, truth)
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
	best        ceilingNight
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
	t.best.hits += cs.best.hits
	t.best.forced += cs.best.forced
}

func (t creditTotal) line(what string) string {
	rate := "-"
	if t.reads > 0 {
		rate = fmt.Sprintf("%.0f%%", 100*float64(t.hits)/float64(t.reads))
	}
	n := t.last - t.first + 1
	return fmt.Sprintf("credit, runs %d-%d (%s): %d reads, %d found a new entry (%s); a night %d-%d reads, mean %.0f "+
		"(the most %.0f min at %d requests/minute); since last read max %s; %s",
		t.first, t.last, what, t.reads, t.hits, rate, t.least, t.most, float64(t.reads)/float64(n),
		float64(t.most)/requestsPerMin, requestsPerMin, days(t.staleMax), t.best)
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

// ceiling reads as a reader that knew when each customer's credit moved would, under the same
// bound: a customer on the night after its credit moved (a read that finds an entry), otherwise
// only when waiting one more night would leave its last read older than the bound. No order of
// reads that keeps the bound finds an entry in a larger share of its reads; set against
// billsync's share it says how much of the gap to a goal is the order's and how much the bound's.
// It is generous: a customer's first sight costs it no read unless its credit moved.
type ceiling struct {
	bound, advance time.Duration
	prev           time.Time            // the simulator's clock at the last run
	last           map[string]time.Time // each customer's last read
}

// ceilingNight is what the ceiling read in one night, or summed over nights.
type ceilingNight struct {
	hits, forced int64
	firstSync    bool // the night set the clock only
}

func (c ceilingNight) String() string {
	if c.hits+c.forced == 0 {
		return "a reader that knew when credit moved: no reads"
	}
	return fmt.Sprintf("a reader that knew when credit moved: %d reads, %d found an entry (%.0f%%)",
		c.hits+c.forced, c.hits, 100*float64(c.hits)/float64(c.hits+c.forced))
}

func newCeiling(bound, advance time.Duration) *ceiling {
	return &ceiling{bound: bound, advance: advance, last: map[string]time.Time{}}
}

// night reads the live customers at now, given every ledger entry the simulator holds. The
// first night is the first sync, which reads everyone: it only sets the clock.
func (c *ceiling) night(now time.Time, live map[string]bool, truth []ledgerTruth) ceilingNight {
	first := c.prev.IsZero()
	n := ceilingNight{firstSync: first}
	moved := map[string]bool{}
	for _, l := range truth {
		if !first && l.CreatedAt.After(c.prev) && !l.CreatedAt.After(now) {
			moved[l.CustomerID] = true
		}
	}
	for id := range live {
		last, seen := c.last[id]
		switch {
		case first || (!seen && !moved[id]):
			c.last[id] = now
		case moved[id]:
			n.hits++
			c.last[id] = now
		case now.Add(c.advance).Sub(last) > c.bound:
			n.forced++
			c.last[id] = now
		}
	}
	c.prev = now
	return n
}
