package fetch

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/syncdata"
)

// TrustServiceClock as Options.MaxClockSkew stores the service's times whatever its clock says:
// for a simulator whose clock is simulated (tests, benchmarks), never for a real service.
const TrustServiceClock = 100 * 365 * 24 * time.Hour

// One clock rule for everything a run stores (record observation times, credit read times,
// cursors): the service's clock, from its Date header, while it agrees with this machine's within
// the bound; this machine's otherwise, said once in a warning and in the summary (and so the
// metrics). A service clock years ahead once stored read times years ahead, and every later run
// then thought every customer's credit freshly read.
//
// A run decides at its first need of the time, after a response has arrived, and records the
// decision in its row; an attempt resuming the run applies the same rule with the offset the
// first attempt measured. Deciding again on resume took this machine's clock when the resumed
// attempt needed the time before any response (every list already done), so records the first
// attempt's service clock had accepted failed validation, at every attempt.
type runClock struct {
	c     *api.Client
	bound time.Duration
	log   *slog.Logger
	sink  Sink // set after the Open, before the sink first asks for the time

	mu       sync.Mutex
	rule     syncdata.RunClock // the rule applied, once decided
	setAside bool              // the service's clock disagreed beyond the bound and was set aside
	machine  time.Time         // this machine's clock when the run decided
	offset   time.Duration     // the service's clock minus this machine's then (known: a Date had arrived)
	known    bool
	// earlier is the latest the service's clock read in an earlier run that stored records it
	// dated ahead of this machine's (zero: none); set before the run first needs the time.
	earlier time.Time
}

// now is the sink's source of the run's observation time; the sink calls it once. It also sets
// the run's bound of the records' times: a day after the later of the service's clock and this
// machine's. A service whose clock runs ahead dates its records by it: they are stored as it
// dates them and flagged (Account), while everything billsync itself stores keeps to this
// machine's clock. A record dated more than a day after both clocks is still refused.
func (rc *runClock) now() time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	machine := time.Now()
	cur, curKnown := rc.c.ClockOffset()
	off, known := cur, curKnown
	stored := rc.sink.Run().Clock
	var t time.Time
	if stored.Source != "" {
		rc.rule = stored
		if !known && !stored.NoDate {
			off, known = stored.Offset, true // no answer yet: the offset the first attempt measured
		}
		switch {
		case stored.Source == syncdata.ClockMachine:
			t = machine
		case curKnown && cur-stored.Offset <= rc.bound && cur-stored.Offset >= -rc.bound:
			t = rc.c.ServerTime()
		default:
			t = machine.Add(stored.Offset)
		}
		rc.setAside = stored.Source == syncdata.ClockMachine && known && rc.outside(off)
	} else {
		switch {
		case !known:
			rc.rule, t = syncdata.RunClock{Source: syncdata.ClockMachine, NoDate: true}, machine
			rc.log.Warn("the service's answers carry no Date header: billsync cannot tell how far its clock is from this machine's, "+
				"so the run's times are this machine's, and the credit histories read in it are paced by signals and the refresh bound, "+
				"not by each customer's own pace (read from the service's dates)", "machine_clock", machine)
		case rc.outside(off):
			rc.rule, t, rc.setAside = syncdata.RunClock{Source: syncdata.ClockMachine, Offset: off}, machine, true
		default:
			rc.rule, t = syncdata.RunClock{Source: syncdata.ClockService, Offset: off}, rc.c.ServerTime()
		}
		if err := rc.sink.SetRunClock(rc.rule); err != nil {
			// A resumed attempt then decides again; the times of this one are still by the rule.
			rc.log.Error("recording the run's clock", "err", err)
		}
	}
	rc.machine, rc.offset, rc.known = machine, off, known
	rc.sink.SetTimeBound(rc.timeBound(t))
	if rc.setAside {
		rc.warn()
	}
	return t
}

// roundOffset rounds a clock offset for messages: Date headers have whole seconds and an answer
// takes time to arrive, so an offset of hours is shown to the minute.
func roundOffset(d time.Duration) time.Duration {
	if d.Abs() >= time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}

func (rc *runClock) outside(off time.Duration) bool { return off > rc.bound || off < -rc.bound }

// clockText shows a clock's time in messages, to the minute, in UTC (the warehouse's words).
func clockText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// timeBound is the run's bound of its records' times, t being its observation time: a day after
// the later of the run's clocks, or after the service's clock as an earlier run read it ahead of
// this machine's, when that is later still. The service keeps the dates it gave by its clock
// ahead after its clock is set right, and a record changed then (an invoice created while it was
// ahead, paid after) carries its createdAt again: judged by this run's clocks alone it failed
// every run until this machine's clock came within a day of it.
func (rc *runClock) timeBound(t time.Time) syncdata.TimeBound {
	b := rc.ownBound(t)
	if rc.earlier.Add(plausibleAhead).After(b.Latest) {
		b.Latest = rc.earlier.Add(plausibleAhead)
		b.Clocks += fmt.Sprintf(", and after the service's clock as an earlier run read it ahead of this machine's (its Date header: %s), "+
			"by which it dated records stored then", clockText(rc.earlier))
	}
	return b
}

// ownBound is the bound by the run's own clocks, t being its observation time.
func (rc *runClock) ownBound(t time.Time) syncdata.TimeBound {
	switch {
	case rc.rule.Source == syncdata.ClockService:
		agrees := fmt.Sprintf(", within %s of this machine's", rc.bound)
		if rc.bound >= TrustServiceClock {
			agrees = ", trusted whatever this machine's says"
		}
		return syncdata.TimeBound{Latest: t.Add(plausibleAhead),
			Clocks: fmt.Sprintf("the service's clock (its Date header: %s%s)", clockText(t), agrees)}
	case !rc.known:
		return syncdata.TimeBound{Latest: rc.machine.Add(plausibleAhead),
			Clocks: fmt.Sprintf("this machine's clock (%s; the service's answers carried no Date header)", clockText(rc.machine))}
	}
	later := rc.machine.Add(max(rc.offset, 0))
	return syncdata.TimeBound{Latest: later.Add(plausibleAhead), Clocks: "both clocks: " + rc.bothClocks()}
}

// plausibleAhead is how far past the run's clocks a record's time may lie (warehouse.PlausibleAhead).
const plausibleAhead = 24 * time.Hour

// bothClocks names the two clocks with their times and how far apart they are.
func (rc *runClock) bothClocks() string {
	way := "ahead of"
	if rc.offset < 0 {
		way = "behind"
	}
	return fmt.Sprintf("the service's (its Date header: %s, %s %s this machine's) and this machine's (%s)",
		clockText(rc.machine.Add(rc.offset)), roundOffset(rc.offset.Abs()), way, clockText(rc.machine))
}

func (rc *runClock) warn() {
	msg := fmt.Sprintf("the service's clock (its Date header) is %s ahead of this machine's clock: its records are stored as it dates them "+
		"(those dated after this machine's clock are flagged in data quality), billsync's own times are this machine's, and the run is partial",
		roundOffset(rc.offset))
	if rc.offset < 0 {
		msg = fmt.Sprintf("the service's clock (its Date header) is %s behind this machine's clock: its records are stored as it dates them, "+
			"billsync's own times are this machine's", roundOffset(-rc.offset))
	}
	rc.log.Warn(msg,
		"service_clock", rc.machine.Add(rc.offset), "machine_clock", rc.machine, // times: printed in BILLSYNC_TZ
		"service_ahead_by", roundOffset(rc.offset), "bound", rc.bound,
		"remedy", "set the service's or this machine's clock right (NTP); "+
			"BILLSYNC_MAX_CLOCK_SKEW raises the bound, for a simulator whose clock is simulated")
}

// consistent fails when the service's Date header jumped within the run: its answers put its
// clock further apart from this machine's than the bound allows between themselves. Which of
// them dated the records cannot be told, so the run stops rather than guess.
func (rc *runClock) consistent() error {
	if rc.bound >= TrustServiceClock {
		return nil
	}
	r := rc.c.ClockRange()
	if r.N < 2 || r.Hi-r.Lo <= rc.bound {
		return nil
	}
	return fmt.Errorf("the service's clock (its Date header) is inconsistent: within this run its %d answers put it from %s to %s "+
		"ahead of this machine's clock (negative: behind), %s apart, more than the clock skew bound of %s: billsync cannot tell "+
		"which clock the service dated its records by, so the run stops unpublished; check the service's clock, or a proxy "+
		"or load balancer in front of it that sets Date (BILLSYNC_MAX_CLOCK_SKEW is the bound)",
		r.N, roundOffset(r.Lo), roundOffset(r.Hi), roundOffset(r.Hi-r.Lo), rc.bound)
}

// toService moves a time this run stores by into the service's clock, for a parameter the
// service compares with its own times (a credit history's startDate): when this machine's clock
// is ahead of the service's, the service dated what it holds earlier, and a start on this
// machine's clock would skip it. A service clock ahead needs nothing: the start is then earlier.
func (rc *runClock) toService(t time.Time) time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.rule.Source != syncdata.ClockMachine {
		return t
	}
	off, known := rc.c.ClockOffset()
	if !known {
		off = rc.rule.Offset
	}
	return t.Add(min(off, 0))
}

// serviceAhead is how far the service's clock is ahead of the run's own times: its offset when
// the run stores this machine's times, 0 when the run is on the service's clock or has no Date.
func (rc *runClock) serviceAhead() time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.rule.Source != syncdata.ClockMachine || rc.rule.NoDate {
		return 0
	}
	return rc.rule.Offset
}

// report is the clock the run stored its times by, whether it set the service's aside, and the
// two clocks when it decided (the service's zero when no Date had arrived).
func (rc *runClock) report() (source string, setAside bool, machine, service time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.known {
		service = rc.machine.Add(rc.offset)
	}
	return rc.rule.Source, rc.setAside, rc.machine, service
}
