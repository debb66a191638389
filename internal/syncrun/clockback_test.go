package syncrun_test

import (
	"context"
	"encoding/csv"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/report"
	"github.com/billsync/billsync/internal/syncdata"
	"github.com/billsync/billsync/internal/syncrun"
)

// TestServiceClockCorrectedBackwards is what an operator lives through when the service's clock,
// 48 hours ahead for two nights, is set right (NTP) between two syncs: the data-quality report
// between them, then changes the service dates by its corrected clock, earlier than what it
// dated before (a customer created while ahead changes e-mail, a new invoice and its delivery, a
// top-up), two more syncs. Run as the daemon runs (one API client for every sync) and as cron
// runs `syncer -once` (a new process, so a new client, each time).
//
// Nothing is lost or misordered: every change the service made after the correction is stored
// (the e-mail change in record_changes, on this machine's clock), the stored records the service
// dated ahead keep their dates and their flags (the data-quality report still lists them: their
// dates are still that far off), the runs after the correction are on the service's clock again
// (succeeded, nothing set aside, no new flag), and no read time or cursor billsync stores is in
// the future.
func TestServiceClockCorrectedBackwards(t *testing.T) {
	for _, daemon := range []bool{true, false} {
		name := map[bool]string{true: "daemon", false: "cron"}[daemon]
		t.Run(name, func(t *testing.T) {
			e, o := aheadEnv(t, 48*time.Hour)
			shared := e.client()
			sync := func(o syncrun.Options) fetch.Summary {
				t.Helper()
				c := shared
				if !daemon {
					c = e.client()
				}
				sums, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: o.Account, Client: c}}, o)
				if err != nil {
					t.Fatalf("sync: %v", err)
				}
				return sums[0]
			}
			// two nights under the clock 48 hours ahead
			if s := sync(o); !s.ClockAhead() {
				t.Fatalf("first sync: the clock not set aside (%s ahead)", s.ClockOffset)
			}
			e.sb.Advance(3 * time.Hour)
			if s := sync(o); !s.ClockAhead() || s.Status() != "partial" {
				t.Fatalf("second sync: %s, ahead %t", s.Status(), s.ClockAhead())
			}
			flaggedAhead := e.count("SELECT count(*) FROM data_quality_flags WHERE flag = ?", syncdata.FlagServiceClock)
			if n := dqFlagRows(t, e); flaggedAhead == 0 || n == 0 {
				t.Fatalf("%d records flagged, the data-quality report lists %d: the test proves nothing", flaggedAhead, n)
			}
			aheadMax := e.query("SELECT max(created_at) FROM customers")[0][0].(time.Time)

			// The operator sets the service's clock right: it reads this machine's time again,
			// 48 hours before what it read. The service then changes records by its corrected clock.
			warned := len(e.warnings()) // those of the runs under the clock ahead
			e.sb.SetClock(time.Now())
			corrected := time.Now()
			ctx := context.Background()
			w := e.client()
			r := e.query(`SELECT id, email FROM customers WHERE created_at > ? AND email IS NOT NULL
				ORDER BY created_at DESC LIMIT 1`, corrected.Add(time.Hour))
			if len(r) == 0 {
				t.Fatal("no customer created under the clock ahead")
			}
			custID, oldEmail := r[0][0].(string), r[0][1].(string)
			newEmail := "koreksi.jam@contoh.co.id"
			if _, err := w.UpdateCustomerEmail(ctx, oldEmail, newEmail); err != nil {
				t.Fatal(err)
			}
			inv, err := w.CreateInvoice(ctx, api.CreateInvoiceRequest{Name: "Sesudah Koreksi", Email: "sesudah@contoh.co.id",
				Mobile: "+6281234567890", Description: "after the clock's correction", RedirectURL: "https://toko.contoh.co.id/terima-kasih", ExpiredAt: corrected.Add(72 * time.Hour),
				Items: []api.InvoiceItem{{Description: "Jasa", Rate: 150000, Quantity: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			prod := e.query("SELECT id FROM products WHERE sub_type = 'credit_usage' ORDER BY id LIMIT 1")[0][0].(string)
			topped := e.query(`SELECT customer_id FROM credit_ledger WHERE created_at > ? ORDER BY created_at DESC LIMIT 1`,
				corrected.Add(time.Hour))[0][0].(string)
			if _, err := w.AddCredit(ctx, api.AddCreditRequest{CustomerID: topped, ProductID: prod, Amount: 12345}); err != nil {
				t.Fatal(err)
			}
			// the top-up as billsync's own job would hint it, so the run reads that customer
			o3 := o
			o3.CreditHints = []syncdata.CreditHint{{Account: o.Account, CustomerID: topped, At: time.Now()}}

			s3 := sync(o3)
			if s3.ClockSetAside || s3.ClockNote() != "" || s3.Status() != "succeeded" {
				t.Errorf("the sync after the correction: %s, set aside %t, note %q: want succeeded on the service's clock",
					s3.Status(), s3.ClockSetAside, s3.ClockNote())
			}
			now := time.Now()
			// billsync's own times: this machine's clock (which the service's agrees with again)
			for _, q := range []string{
				"SELECT max(last_seen_at) FROM customers",
				"SELECT max(last_fetched_at) FROM credit_fetch_state",
				"SELECT max(observed_at) FROM record_changes",
			} {
				if got := e.query(q)[0][0].(time.Time); !within(got, now, time.Minute) {
					t.Errorf("%s = %v, want this machine's clock %v", q, got, now)
				}
			}
			// the changes dated earlier than what was stored, stored
			if got := e.query("SELECT email, updated_at FROM customers WHERE id = ?", custID)[0]; got[0] != newEmail ||
				!within(got[1].(time.Time), corrected, time.Minute) {
				t.Errorf("customer %s: email %v, updatedAt %v: want %s, dated by the corrected clock", custID, got[0], got[1], newEmail)
			}
			if n := e.count(`SELECT count(*) FROM record_changes WHERE entity = 'customers' AND record_id = ? AND field = 'email'
				AND old_value = ? AND new_value = ?`, custID, oldEmail, newEmail); n != 1 {
				t.Errorf("record_changes has %d rows for the e-mail change, want 1", n)
			}
			// dated before what the service dated ahead, first seen after it: billsync's order is true
			if got := e.query("SELECT created_at, first_seen_at FROM invoices WHERE id = ?", inv.ID); len(got) != 1 ||
				!got[0][0].(time.Time).Before(aheadMax) || !within(got[0][1].(time.Time), now, time.Minute) {
				t.Errorf("the invoice created after the correction: %v, want stored, dated before %v, first seen now", got, aheadMax)
			}
			if n := e.count(`SELECT count(*) FROM credit_ledger WHERE customer_id = ? AND credit = 12345 AND created_at < ?`,
				topped, aheadMax); n != 1 {
				t.Errorf("the top-up after the correction: %d entries stored, want 1", n)
			}
			if n := e.count("SELECT count(*) FROM data_quality_flags WHERE flag = ?", syncdata.FlagServiceClock); n != flaggedAhead {
				t.Errorf("%d service_clock flags after the correction, want the %d of the runs under the clock ahead, kept", n, flaggedAhead)
			}
			if n := dqFlagRows(t, e); n == 0 {
				t.Error("the data-quality report no longer lists the records dated by the clock ahead")
			}
			e.assertMirrors()

			// the next night's sync, the clocks still agreeing
			e.sb.Advance(2 * time.Minute)
			mark := e.logs.Len()
			if s := sync(o); s.ClockSetAside || s.Status() != "succeeded" {
				t.Errorf("the sync after: %s, set aside %t", s.Status(), s.ClockSetAside)
			}
			if l := e.logs.String()[mark:]; strings.Contains(l, "stored read times were after this machine's clock") {
				t.Errorf("read times stored after the correction were in the future:\n%s", l)
			}
			if w := e.warnings(); len(w) > warned {
				t.Errorf("warnings after the correction:\n%s", strings.Join(w[warned:], "\n"))
			}
			e.assertMirrors()
		})
	}
}

// dqFlagRows renders the data-quality report from the published warehouse and counts the rows
// of its flagged-records sheet (CSV) that name the service's clock.
func dqFlagRows(t *testing.T, e *env) int {
	t.Helper()
	out := t.TempDir()
	files, err := report.Generate(context.Background(), report.Options{
		Report: config.Report{ReportsOut: out}, DB: e.path, Formats: []string{"csv"}, AsOf: time.Now(),
		Names: []string{"data-quality"}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			continue // not every CSV is the comma dialect's single table
		}
		for _, row := range rows {
			if strings.Contains(strings.Join(row, ","), syncdata.FlagServiceClock) {
				n++
			}
		}
	}
	if len(files) == 0 {
		t.Fatalf("no files in %s", filepath.Clean(out))
	}
	return n
}
