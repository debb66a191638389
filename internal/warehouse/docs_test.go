package warehouse

import (
	"os"
	"regexp"
	"testing"

	"github.com/billsync/billsync/internal/entity"
)

// TestDocQueriesRun runs every SQL example of docs/warehouse.md on a small warehouse.
func TestDocQueriesRun(t *testing.T) {
	doc, err := os.ReadFile("../../docs/warehouse.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 4 {
		t.Fatalf("found %d SQL examples", len(blocks))
	}
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "main")
	load(t, b, entity.Invoices, run, t0, true, fixtureItems(t, "Invoices__invoice-list-response.json")...)
	load(t, b, entity.UnpaidTransactions, run, t0, true, fixtureItems(t, "Transactions__unpaid-list-response.json")...)
	load(t, b, entity.CreditLedger, run, t0, true, fixtureItems(t, "CreditBasedProduct__credit-usage-paginate-history-response.json")...)
	for _, blk := range blocks {
		rows, err := b.DB().Query(string(blk[1]))
		if err != nil {
			t.Errorf("%s\n-> %v", blk[1], err)
			continue
		}
		rows.Close()
	}
}
