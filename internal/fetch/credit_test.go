package fetch_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
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
