package syncrun_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/logbuf"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncdata"
	"github.com/billsync/billsync/internal/syncrun"
)

// newEnvAt is newEnv with the simulator's clock at now.
func newEnvAt(t *testing.T, scale float64, now time.Time) *env {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: 7, Scale: scale, Now: now.UTC().Truncate(time.Second), Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	return &env{t: t, sb: sb, srv: srv, path: filepath.Join(t.TempDir(), "billsync.duckdb"), logs: &logbuf.Buffer{}}
}

// within says whether t is within d of want.
func within(t, want time.Time, d time.Duration) bool { return t.Sub(want) <= d && want.Sub(t) <= d }

// TestServiceClockAheadSetAside: a service whose Date runs five years ahead of this machine's
// (its records dated right) gets a warning and the machine's clock for everything the run
// stores: observation times, credit read times and the webhook cursor; the next runs read credit
// histories as the refresh bound says.
func TestServiceClockAheadSetAside(t *testing.T) {
	e := newEnvAt(t, 0.01, time.Now())
	if err := e.sb.SetFaults(sandbox.Faults{DateAhead: 1}); err != nil {
		t.Fatal(err)
	}
	o := e.opts()
	o.MaxClockSkew = 0 // the default bound
	sum := e.sync(o)
	now := time.Now()
	if sum.ClockSource != syncdata.ClockMachine || !sum.ClockSetAside || sum.ClockOffset < 4*365*24*time.Hour {
		t.Errorf("clock %q set aside %t offset %s: want this machine's, the service's set aside five years ahead",
			sum.ClockSource, sum.ClockSetAside, sum.ClockOffset)
	}
	if n := strings.Count(e.logs.String(), "the service's clock (its Date header) is "); n != 1 {
		t.Errorf("%d warnings, want 1", n)
	}
	for _, q := range []string{
		"SELECT max(last_seen_at) FROM customers",
		"SELECT max(last_fetched_at) FROM credit_fetch_state",
	} {
		if got := e.query(q)[0][0].(time.Time); !within(got, now, time.Minute) {
			t.Errorf("%s = %v, want this machine's clock %v", q, got, now)
		}
	}
	// the webhook cursor is the newest delivery read, never past the run's clock
	q := "SELECT to_timestamp(max(value::BIGINT) / 1000) FROM sync_cursors WHERE stream = 'webhook_deliveries'"
	if got := e.query(q)[0][0].(time.Time); got.After(now.Add(time.Minute)) {
		t.Errorf("%s = %v, after this machine's clock %v", q, got, now)
	}
	if got := e.query("SELECT clock_source FROM sync_runs")[0][0]; got != syncdata.ClockMachine {
		t.Errorf("sync_runs.clock_source %v", got)
	}
	// the service's clock right again: a normal run, which stores the service's times
	e.sb.SetFaults(sandbox.Faults{})
	sum = e.sync(o)
	if sum.ClockSource != syncdata.ClockService || sum.ClockSetAside {
		t.Errorf("second run: clock %q set aside %t", sum.ClockSource, sum.ClockSetAside)
	}
	e.assertMirrors()
}

// TestFutureReadTimesRepaired: read times an earlier run stored from a service clock five years
// ahead (trusted then, as before the clock rule) would keep every customer's credit from being
// read for five years. The next run under the rule forgets them, logged, and reads every
// customer's credit history again; the stored times are this machine's.
func TestFutureReadTimesRepaired(t *testing.T) {
	e := newEnvAt(t, 0.01, time.Now())
	if err := e.sb.SetFaults(sandbox.Faults{DateAhead: 1}); err != nil {
		t.Fatal(err)
	}
	trusting := e.opts() // MaxClockSkew: fetch.TrustServiceClock
	e.sync(trusting)
	if got := e.query("SELECT min(last_fetched_at) FROM credit_fetch_state")[0][0].(time.Time); got.Before(time.Now().AddDate(4, 0, 0)) {
		t.Fatalf("the set-up stored read times at %v, not five years ahead", got)
	}
	customers := e.count("SELECT count(*) FROM customers")
	e.sb.SetFaults(sandbox.Faults{})
	o := e.opts()
	o.MaxClockSkew = 0
	sum := e.sync(o)
	if !strings.Contains(e.logs.String(), "stored read times were after this machine's clock") {
		t.Error("the repair is not logged")
	}
	read := 0
	for _, r := range sum.CreditReads {
		read += r.Read
	}
	if int64(read) != customers {
		t.Errorf("%d credit histories read after the repair, want every customer's (%d)", read, customers)
	}
	if got := e.query("SELECT max(last_fetched_at) FROM credit_fetch_state")[0][0].(time.Time); !within(got, time.Now(), time.Minute) {
		t.Errorf("read times %v after the repair, want this machine's clock", got)
	}
	e.assertMirrors()
}

// TestResumeKeepsTheClockRule: a simulator whose clock runs 30 days ahead (trusted: the bound
// raised for it) and a run that fails after its list phase. Resumed, the run has no response before
// it needs the time (every list is done); it applies the first attempt's rule, the service's clock
// by the offset measured, so the credit entries dated on that clock validate as they did, and the
// sync completes rather than failing the same validation at every attempt.
func TestResumeKeepsTheClockRule(t *testing.T) {
	e := newEnvAt(t, 0.01, time.Now().Add(30*24*time.Hour))
	o := e.opts()
	o.MaxClockSkew = 60 * 24 * time.Hour
	if err := e.sb.SetFaults(sandbox.Faults{PathPrefix: "/credit/", ServerError: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, o)
	if err == nil || !strings.Contains(err.Error(), "credit history of customer") {
		t.Fatalf("first attempt: %v, want it to fail in the credit fan-out", err)
	}
	e.sb.SetFaults(sandbox.Faults{})
	sum := e.sync(o)
	if !sum.Resumed || sum.ClockSource != syncdata.ClockService {
		t.Errorf("resumed %t, clock %q: want the first attempt's run resumed on the service's clock", sum.Resumed, sum.ClockSource)
	}
	if got := e.query("SELECT max(last_fetched_at) FROM credit_fetch_state")[0][0].(time.Time); !within(got, e.sb.Now(), time.Minute) {
		t.Errorf("credit read at %v, want the service's clock %v", got, e.sb.Now())
	}
	e.assertMirrors()
}
