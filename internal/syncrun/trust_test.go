package syncrun_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncdata"
	"github.com/billsync/billsync/internal/syncrun"
)

// aheadEnv is a simulator whose clock runs `ahead` of this machine's, with a day of its own
// history just before its now (records the service dated ahead of this machine's clock), and a
// run's options with the default clock skew bound.
func aheadEnv(t *testing.T, ahead time.Duration) (*env, syncrun.Options) {
	t.Helper()
	e := newEnvAt(t, 0.2, time.Now().Add(ahead-24*time.Hour))
	e.sb.Advance(24 * time.Hour)
	o := e.opts()
	o.MaxClockSkew = 0 // the default bound, 5m
	return e, o
}

// warnings are the WARN lines of the logs.
func (e *env) warnings() []string {
	var out []string
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") {
			out = append(out, l)
		}
	}
	return out
}

// TestServiceClockAheadKeepsSyncing: a service whose clock runs 48 hours ahead of this machine's
// (its Date says so on every answer, and it dates its records by it). Every sync publishes, fresh
// and resumed: the records stored as the service dates them, those dated after this machine's
// clock flagged in data quality, the run partial with one warning naming both clocks; everything
// billsync stores of its own is on this machine's clock. On main every sync failed:
// "createdAt … is more than a day after the server's clock (<this machine's time>)".
func TestServiceClockAheadKeepsSyncing(t *testing.T) {
	e, o := aheadEnv(t, 48*time.Hour)
	sum := e.sync(o)
	now := time.Now()
	if sum.Status() != "partial" || !sum.ClockSetAside || sum.ClockOffset < 47*time.Hour || sum.ClockOffset > 49*time.Hour {
		t.Errorf("status %s, set aside %t, offset %s: want partial, the service's clock set aside 48h ahead",
			sum.Status(), sum.ClockSetAside, sum.ClockOffset)
	}
	if w := e.warnings(); len(w) != 1 || !strings.Contains(w[0], "the service's clock (its Date header) is 48h0m") ||
		!strings.Contains(w[0], "ahead of this machine's clock") || !strings.Contains(w[0], "service_clock=") || !strings.Contains(w[0], "machine_clock=") {
		t.Errorf("warnings:\n%s\nwant one, naming both clocks and the offset", strings.Join(w, "\n"))
	}
	for _, want := range []string{"the service's clock (its Date header) read ", "when this machine's clock read ", "48h0m", "ahead of it",
		"records dated after this machine's clock are flagged in data quality"} {
		if !strings.Contains(sum.ClockNote(), want) {
			t.Errorf("the operators' note lacks %q: %s", want, sum.ClockNote())
		}
	}
	if got := e.query("SELECT status FROM sync_runs")[0][0]; got != "partial" {
		t.Errorf("sync_runs.status %v", got)
	}
	// stored as dated: the service's clock, ahead of this machine's
	ahead := e.count(`SELECT count(*) FROM (SELECT created_at FROM payment_requests UNION ALL SELECT created_at FROM invoices
		UNION ALL SELECT created_at FROM credit_ledger UNION ALL SELECT created_at FROM webhook_deliveries) WHERE created_at > ?`, now.Add(time.Hour))
	flagged := e.count("SELECT count(*) FROM data_quality_flags WHERE flag = ?", syncdata.FlagServiceClock)
	if ahead == 0 || flagged < ahead || flagged != sum.ClockFlagged {
		t.Errorf("%d records dated ahead of this machine's clock, %d flagged (summary %d): want them all flagged", ahead, flagged, sum.ClockFlagged)
	}
	d := e.query("SELECT detail FROM data_quality_flags WHERE flag = ? LIMIT 1", syncdata.FlagServiceClock)[0][0].(string)
	if !strings.Contains(d, "is after this machine's clock (") || !strings.Contains(d, "the service's clock (its Date header) ran 48h0m") {
		t.Errorf("a flag's detail: %s", d)
	}
	// billsync's own times: this machine's clock
	for _, q := range []string{
		"SELECT max(last_seen_at) FROM customers",
		"SELECT max(last_fetched_at) FROM credit_fetch_state",
		"SELECT max(observed_at) FROM data_quality_flags",
	} {
		if got := e.query(q)[0][0].(time.Time); !within(got, now, time.Minute) {
			t.Errorf("%s = %v, want this machine's clock %v", q, got, now)
		}
	}
	q := "SELECT to_timestamp(max(value::BIGINT) / 1000) FROM sync_cursors WHERE stream = 'webhook_deliveries'"
	if got := e.query(q)[0][0].(time.Time); got.After(time.Now().Add(time.Minute)) {
		t.Errorf("%s = %v, after this machine's clock", q, got)
	}
	e.assertMirrors()

	// the next run, fresh, an hour of the service's later
	e.sb.Advance(time.Hour)
	if sum = e.sync(o); sum.Status() != "partial" || sum.Resumed {
		t.Errorf("second run: %s, resumed %t", sum.Status(), sum.Resumed)
	}
	e.assertMirrors()

	// a run that fails in its credit fan-out, resumed by the next
	e.sb.Advance(time.Hour)
	if err := e.sb.SetFaults(sandbox.Faults{PathPrefix: "/credit/", ServerError: 1}); err != nil {
		t.Fatal(err)
	}
	o2 := o
	o2.CreditRefresh = time.Millisecond // every customer due by this machine's clock: the fan-out meets the fault
	if _, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, o2); err == nil {
		t.Fatal("the run meant to fail succeeded")
	}
	e.sb.SetFaults(sandbox.Faults{})
	if sum = e.sync(o2); !sum.Resumed || sum.Status() != "partial" {
		t.Errorf("resumed run: resumed %t, %s", sum.Resumed, sum.Status())
	}
	e.assertMirrors()
}

// TestServiceClockYearsAheadKeepsSyncing: the same five years ahead, the row's "a sync after one
// under a Date 5 years ahead": each sync publishes and the credit ledger mirrors the service's.
func TestServiceClockYearsAheadKeepsSyncing(t *testing.T) {
	e, o := aheadEnv(t, 5*365*24*time.Hour)
	// every customer's credit read each run: the test moves the service's clock a day between the
	// runs and this machine's by seconds, and reads fall due by the time between them on this
	// machine's clock (the run's own). Two real days apart, a customer's own pace would read it:
	// the ledger's dates are compared with the service's clock (TestCreditTargetsPaceUnderServiceClockAhead).
	o.CreditRefresh = time.Millisecond
	e.sync(o)
	e.assertMirrors()
	e.sb.Advance(24 * time.Hour)
	if sum := e.sync(o); sum.Status() != "partial" || sum.ClockFlagged == 0 {
		t.Errorf("second run: %s, %d records flagged", sum.Status(), sum.ClockFlagged)
	}
	e.assertMirrors()
	if got := e.query("SELECT max(last_fetched_at) FROM credit_fetch_state")[0][0].(time.Time); !within(got, time.Now(), time.Minute) {
		t.Errorf("credit read at %v, want this machine's clock", got)
	}
}

// TestRecordBeyondBothClocks: under a service clock 48 hours ahead, a delivery dated 2999 is still
// refused, the message naming both clocks with their times and the offset.
func TestRecordBeyondBothClocks(t *testing.T) {
	e, o := aheadEnv(t, 48*time.Hour)
	if err := e.sb.FailNext(sandbox.FaultFutureTime, 1, "/hl/v2/webhooks"); err != nil {
		t.Fatal(err)
	}
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, o)
	if err == nil {
		t.Fatal("a delivery dated 2999 was stored")
	}
	for _, want := range []string{`createdAt "2999-01-01T00:00:00.000Z" is more than a day after both clocks: the service's (its Date header: `,
		"48h0m", "ahead of this machine's) and this machine's ("} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestServiceDateJumps: one answer whose Date is three years off the others: which clock dated
// the records cannot be told, so the run says so and stops, unpublished.
func TestServiceDateJumps(t *testing.T) {
	e := newEnvAt(t, 0.01, time.Now())
	o := e.opts()
	o.MaxClockSkew = 0
	if err := e.sb.FailNext(sandbox.FaultWildDate, 1, "/hl/v1/invoice"); err != nil {
		t.Fatal(err)
	}
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, o)
	if err == nil {
		t.Fatal("the run published under a Date that jumped three years")
	}
	for _, want := range []string{"the service's clock (its Date header) is inconsistent: within this run its ",
		"ahead of this machine's clock (negative: behind), 26280h", "more than the clock skew bound of 5m0s",
		"billsync cannot tell which clock the service dated its records by"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// the service's Date steady again: the next run publishes
	e.sync(o)
	e.assertMirrors()
}

// TestEchoedKeyStoredRedacted: the service echoes the API key into a customer's name. The record
// is stored with the key redacted in its column and in its raw JSON (still valid JSON), counted in
// data quality; no 6 characters of the key are anywhere in the warehouse or the logs. On main the
// name and the raw JSON held the key, and every report printed it.
func TestEchoedKeyStoredRedacted(t *testing.T) {
	e := newEnv(t, 0.01)
	if err := e.sb.SetFaults(sandbox.Faults{PathPrefix: "/hl/v1/customer", EchoKeyRecord: 1}); err != nil {
		t.Fatal(err)
	}
	sum := e.sync(e.opts())
	if sum.Redacted != 1 {
		t.Errorf("%d records redacted, want 1", sum.Redacted)
	}
	if where := keyInWarehouse(t, e.path); where != "" {
		t.Errorf("a fragment of the key is stored in %s", where)
	}
	if f := keyFragment(e.logs.String()); f != "" {
		t.Errorf("key fragment %q in the logs", f)
	}
	r := e.query(`SELECT c.id, c.name, c.raw::VARCHAR, json_valid(c.raw::VARCHAR) FROM customers c
		JOIN data_quality_flags f ON f.record_id = c.id AND f.entity = 'customers'
		WHERE f.flag = ? AND f.field = 'name' AND f.path = '/hl/v1/customer' AND f.page = 1 AND f.item = 0`, syncdata.FlagKeyRedacted)
	if len(r) != 1 {
		t.Fatalf("flagged customers: %v, want the one whose name echoed the key", r)
	}
	name, raw := r[0][1].(string), r[0][2].(string)
	if !strings.HasSuffix(name, " [redacted]") || r[0][3] != true {
		t.Errorf("name %q, raw valid JSON %v: want the key redacted, the JSON valid", name, r[0][3])
	}
	var rec struct{ Name string }
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Name != name {
		t.Errorf("raw %s: its name %q, want the column's %q", raw, rec.Name, name)
	}
	// the service stops echoing: the name is stored as sent again
	e.sb.SetFaults(sandbox.Faults{})
	e.sync(e.opts())
	if n := e.count("SELECT count(*) FROM customers WHERE name LIKE '%[redacted]%'"); n != 0 {
		t.Errorf("%d names still redacted after the service stopped echoing the key", n)
	}
	e.assertMirrors()
}
