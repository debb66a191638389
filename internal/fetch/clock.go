package fetch

import (
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
}

// now is the sink's source of the run's observation time; the sink calls it once.
func (rc *runClock) now() time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	machine := time.Now()
	off, known := rc.c.ClockOffset()
	stored := rc.sink.Run().Clock
	disagrees := known && (off > rc.bound || off < -rc.bound)
	if stored.Source != "" {
		rc.rule = stored
		rc.setAside = stored.Source == syncdata.ClockMachine && disagrees
		if rc.setAside {
			rc.warn(off, machine)
		}
		if stored.Source == syncdata.ClockMachine {
			return machine
		}
		if d := off - stored.Offset; known && d <= rc.bound && d >= -rc.bound {
			return rc.c.ServerTime()
		}
		return machine.Add(stored.Offset)
	}
	var t time.Time
	switch {
	case !known:
		rc.rule, t = syncdata.RunClock{Source: syncdata.ClockMachine}, machine
	case disagrees:
		rc.rule, t, rc.setAside = syncdata.RunClock{Source: syncdata.ClockMachine, Offset: off}, machine, true
		rc.warn(off, machine)
	default:
		rc.rule, t = syncdata.RunClock{Source: syncdata.ClockService, Offset: off}, rc.c.ServerTime()
	}
	if err := rc.sink.SetRunClock(rc.rule); err != nil {
		// A resumed attempt then decides again; the times of this one are still by the rule.
		rc.log.Error("recording the run's clock", "err", err)
	}
	return t
}

func (rc *runClock) warn(off time.Duration, machine time.Time) {
	rc.log.Warn("the billing service's clock disagrees with this machine's: the run stores this machine's times",
		"service_ahead_by", off.Round(time.Second), "machine_clock", machine,
		"bound", rc.bound, "remedy", "set the service's or this machine's clock right (NTP); "+
			"BILLSYNC_MAX_CLOCK_SKEW raises the bound, for a simulator whose clock is simulated")
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

// report is the clock the run stored its times by, and whether it set the service's aside.
func (rc *runClock) report() (source string, setAside bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.rule.Source, rc.setAside
}
