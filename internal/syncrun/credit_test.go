package syncrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/syncdata"
)

// TestCreditReadsWaitForAReason: nightly syncs against the simulator. A merchant top-up through
// add-credit leaves no trace but the customer's credit history, so that customer is read again
// only in its turn among the customers read ahead of their bound, or at the last run before the
// bound; the bound holds for every customer every night; and no nightly run reads more than a
// third of the customers (the first sync read them all on one night: the bound reads ahead of
// it spread them over its period instead of reading them all again six nights later).
func TestCreditReadsWaitForAReason(t *testing.T) {
	e := newEnv(t, 0.05)
	e.sync(e.opts())
	customers := e.count("SELECT count(*) FROM customers WHERE deleted_upstream_at IS NULL")

	ledger := map[string]bool{}
	for _, raw := range e.truth("credit_ledger") {
		var l struct {
			CustomerID string `json:"customerId"`
		}
		json.Unmarshal(raw, &l)
		ledger[l.CustomerID] = true
	}
	var quiet, product string
	for id := range e.truth("customers") {
		if !ledger[id] && (quiet == "" || id < quiet) {
			quiet = id
		}
	}
	for id, raw := range e.truth("products") {
		var p struct{ Type, SubType, Status string }
		json.Unmarshal(raw, &p)
		if p.SubType == "credit_usage" && p.Status == "active" && (product == "" || id < product) {
			product = id
		}
	}
	if quiet == "" || product == "" {
		t.Fatalf("no customer without credit (%q) or no credit-usage product (%q)", quiet, product)
	}
	// Enough credit to outlast the week: a customer who spends it all may buy more through a
	// checkout, a signal the night after (the simulator's credit model, internal/sandbox/credit.go).
	if _, err := e.client().AddCredit(context.Background(), api.AddCreditRequest{CustomerID: quiet, ProductID: product, Amount: 1_000_000}); err != nil {
		t.Fatal(err)
	}

	const refresh = 7 * 24 * time.Hour
	seenOn := 0
	for night := 1; night <= 8; night++ {
		e.sb.Advance(24 * time.Hour)
		s := e.sync(e.opts())
		now := e.sb.Now()
		var reads int64
		for _, st := range s.Streams {
			if st.Stream == "credit_ledger" {
				reads = st.Pages
			}
		}
		if reads > customers/3 {
			t.Errorf("night %d: %d credit reads, over a third of the %d customers", night, reads, customers)
		}
		if got := e.count("SELECT count(*) FROM credit_ledger WHERE customer_id = ?", quiet); got > 0 && seenOn == 0 {
			seenOn = night
		}
		// Every customer's last read is within the bound until the next night's run.
		stalest := e.query(`SELECT min(f.last_fetched_at) FROM customers c
			LEFT JOIN credit_fetch_state f ON f.customer_id = c.id WHERE c.deleted_upstream_at IS NULL`)[0][0]
		last, ok := stalest.(time.Time)
		if !ok {
			t.Fatalf("night %d: a live customer was never read (%v)", night, stalest)
		}
		if age := now.Add(24 * time.Hour).Sub(last); age > refresh {
			t.Errorf("night %d: a customer's credit will be %v old at the next run, over the bound", night, age)
		}
	}
	// Read on the first sync; the bound passes on night 7, so night 6 is the last run before it.
	if seenOn < 1 || seenOn > 6 {
		t.Errorf("the top-up of %s was read on night %d, want nights 1-6 (by the last run before its bound)", quiet, seenOn)
	}
}

// TestCreditBudgetReadsInReasonOrder: a run's budget stops the credit fan-out anywhere, and what
// it reads first is what matters most: a customer due for a reason is read only when every
// customer due for a more important one is (never, topup, signal, bound, interval, then the
// reads ahead of the bound that level the nights). The reasons read are taken from the
// warehouse (credit_fetch_state.reason), not from the syncer's own count; the budget is cut
// inside every reason in turn, on copies of the same warehouse against the same service.
func TestCreditBudgetReadsInReasonOrder(t *testing.T) {
	order := []string{"never", "topup", "signal", "bound", "interval", "ahead"}
	e := newEnv(t, 0.05)
	o := e.opts()
	o.Details = false
	e.sync(o)
	for range 3 { // nights whose activity leaves signals and paces
		e.sb.Advance(24 * time.Hour)
		e.sync(o)
	}
	e.sb.Advance(24 * time.Hour)
	// Credit billsync's own jobs sent (the job journal's hints) to three customers.
	for _, row := range e.query(`SELECT id FROM customers ORDER BY id LIMIT 3`) {
		o.CreditHints = append(o.CreditHints, syncdata.CreditHint{Account: o.Account, CustomerID: row[0].(string), At: e.sb.Now().Add(-time.Hour)})
	}
	base, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	night := func(name string, budget int64) fetch.Summary {
		e.path = filepath.Join(t.TempDir(), name+".duckdb")
		if err := os.WriteFile(e.path, base, 0o644); err != nil {
			t.Fatal(err)
		}
		o.MaxRequests = budget
		return e.sync(o)
	}
	full := night("unbounded", 0)
	due := map[string]int{}
	for i, r := range full.CreditReads {
		if i > 0 && slices.Index(order, r.Reason) <= slices.Index(order, full.CreditReads[i-1].Reason) {
			t.Fatalf("reasons out of order: %+v", full.CreditReads)
		}
		if r.Read != r.Due {
			t.Fatalf("an unbounded run left %s customers unread: %+v", r.Reason, full.CreditReads)
		}
		due[r.Reason] = r.Due
	}
	if len(full.CreditReads) < 3 || due["ahead"] == 0 {
		t.Fatalf("the night has too few reasons to test the order: %+v", full.CreditReads)
	}
	t.Logf("due: %+v, list requests %d", full.CreditReads, full.ListRequests)

	cuts := 0
	before := 0
	for _, reason := range order {
		n := due[reason]
		if n < 2 {
			before += n
			continue
		}
		cuts++
		// Lists always complete; the fan-out gets the rest, about half of this reason's customers
		// after every more important one (a customer may take more than one request, and
		// requests in flight finish, so where it stops is only about here).
		s := night(reason, full.ListRequests+int64(before+n/2))
		if s.CreditPending == 0 {
			t.Fatalf("cut in %s: the budget left nothing pending", reason)
		}
		read := map[string]int{}
		for _, row := range e.query(`SELECT reason, count(*) FROM credit_fetch_state WHERE run_id = ? GROUP BY reason`, s.RunID) {
			r, _ := row[0].(string)
			read[r] = int(row[1].(int64))
		}
		short := ""
		for _, r := range order {
			switch {
			case short != "" && read[r] > 0:
				t.Errorf("cut in %s: %d %s customers read while %s customers were left unread (read %v of due %v)",
					reason, read[r], r, short, read, due)
			case read[r] > due[r]:
				t.Errorf("cut in %s: %d %s customers read, %d due", reason, read[r], r, due[r])
			case short == "" && read[r] < due[r]:
				short = r
			}
		}
		if short == "" {
			t.Errorf("cut in %s: every reason read in full (%v) though %d customers were left pending", reason, read, s.CreditPending)
		}
		before += n
	}
	if cuts < 2 {
		t.Fatalf("the budget was cut in %d reasons; the night's reasons %v test too little", cuts, due)
	}
}

// TestCreditOwedLeftIsSaid: a budget that leaves customers the run owed a read (here the bound's,
// a week after everyone was read) says so with a warning naming them and what to change; a
// budget that only leaves the first sync's backlog, and a run that reads everyone it owes, do not.
func TestCreditOwedLeftIsSaid(t *testing.T) {
	const warning = "credit histories owed this run left unread"
	e := newEnv(t, 0.05)
	o := e.opts()
	o.Details = false
	o.MaxRequests = 1 // the lists always complete; never-read customers are left
	if s := e.sync(o); s.CreditPending == 0 {
		t.Fatal("a budget of one request left no credit history")
	}
	o.MaxRequests = 0
	e.sync(o)
	if strings.Contains(e.logs.String(), warning) {
		t.Fatalf("the first sync's backlog was called owed:\n%s", e.logs.String())
	}

	e.sb.Advance(8 * 24 * time.Hour) // past the 7-day bound: every customer is owed a read
	base, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	full := e.sync(o)
	if strings.Contains(e.logs.String(), warning) {
		t.Fatalf("a run that read everyone warned:\n%s", e.logs.String())
	}
	bound := 0
	for _, r := range full.CreditReads {
		if r.Reason == syncdata.CreditBound {
			bound = r.Due
		}
	}
	if bound < 10 {
		t.Fatalf("only %d customers due for the bound after 8 days: %+v", bound, full.CreditReads)
	}

	e.path = filepath.Join(t.TempDir(), "cut.duckdb")
	if err := os.WriteFile(e.path, base, 0o644); err != nil {
		t.Fatal(err)
	}
	o.MaxRequests = full.ListRequests + 5
	cut := e.sync(o)
	var w string
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(l, warning) {
			w = l
		}
	}
	owed := 0
	for _, r := range cut.CreditReads {
		if syncdata.CreditOwed(r.Reason) {
			owed += r.Due - r.Read
		}
	}
	if owed == 0 {
		t.Fatalf("the cut budget left nothing owed: %+v", cut.CreditReads)
	}
	for _, want := range []string{"level=WARN", fmt.Sprintf("customers=%d", owed), "bound=", "refresh=168h0m0s", "a longer credit refresh bound"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning lacks %q: %q", want, w)
		}
	}
	t.Log(w)
}
