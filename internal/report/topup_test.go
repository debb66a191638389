package report

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncdata"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/xuri/excelize/v2"
)

// TestCreditAfterTopUp runs what an operator does: a sync, a credit top-up
// job (plan, apply) against the simulator, another sync and the credit
// report. The service stamps the balance it reports in whole seconds and the
// ledger entry of the top-up carries milliseconds of that second: the report
// must still find them equal.
func TestCreditAfterTopUp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "billsync.duckdb")
	journal := filepath.Join(dir, jobs.JournalFile)
	sb, err := sandbox.New(sandbox.Options{Seed: 7, Scale: 0.05, Now: firstSync, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	defer srv.Close()
	client, err := api.New(api.Config{BaseURL: srv.URL, APIKey: testKey, Unlimited: true,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// A sync as the syncer runs it: the customers a job sent credit to since their last read are
	// read again (the journal's credit sends become hints).
	sync := func() {
		t.Helper()
		sends, err := jobs.CreditSends(ctx, journal)
		if err != nil {
			t.Fatal(err)
		}
		var hints []syncdata.CreditHint
		for _, s := range sends {
			hints = append(hints, syncdata.CreditHint{Account: s.Account, CustomerID: s.CustomerID, At: s.At})
		}
		if _, err := syncrun.Run(ctx, db, []syncrun.Account{{Name: "main", Client: client}},
			syncrun.Options{Options: fetch.Options{Fetch: config.Fetch{PageSize: 100, Concurrency: 4, Details: true, MaxClockSkew: fetch.TrustServiceClock}, Account: "main", Log: quiet, CreditHints: hints}}); err != nil {
			t.Fatal(err)
		}
	}
	sync()

	// A customer with credit of a credit-usage product: top it up by 50,000.
	var customer, product string
	var before float64
	func() {
		h, err := warehouse.OpenReadOnly(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		err = h.QueryRowContext(ctx, `SELECT customer_id, product_id, sum(credit - debit)::DOUBLE FROM credit_ledger
			GROUP BY ALL ORDER BY count(*) DESC, customer_id, product_id LIMIT 1`).Scan(&customer, &product, &before)
		if err != nil {
			t.Fatal(err)
		}
	}()
	input := filepath.Join(dir, "topup.csv")
	if err := os.WriteFile(input, []byte(fmt.Sprintf("customerId,productId,amount\n%s,%s,50000\n", customer, product)), 0o644); err != nil {
		t.Fatal(err)
	}
	sb.Advance(time.Hour)
	func() {
		j, err := jobs.OpenJournal(ctx, journal)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		wh, err := warehouse.OpenReadOnly(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := j.Plan(ctx, wh, jobs.PlanOptions{Kind: jobs.CreditTopup, Input: input, Account: "main", User: "t", Host: "h"})
		wh.Close()
		if err != nil {
			t.Fatal(err)
		}
		res, err := j.Apply(ctx, plan.ID, jobs.ApplyOptions{Client: client, Account: "main", BaseURL: srv.URL, User: "t", Host: "h", Log: quiet,
			Now: sb.Now}) // billsync's clock is the simulator's, which stands in the past
		if err != nil || res.Status != jobs.RunCompleted {
			t.Fatalf("apply: %+v %v", res, err)
		}
	}()
	sb.Advance(time.Hour)
	sync()

	asOf := firstSync.Add(2 * time.Hour).In(jakarta(t))
	files, err := Generate(ctx, Options{Report: config.Report{ReportsOut: filepath.Join(dir, "out"), Locale: "en"}, DB: db, Names: []string{"credit"},
		AsOf: asOf, Log: quiet, Formats: []string{"xlsx"}})
	if err != nil {
		t.Fatal(err)
	}
	names, rows := queryRows(t, db, "credit_balances.sql", map[string]string{"as_of": asOf.Format(time.DateOnly)}, journal)
	col := func(r []any, n string) any {
		for i, name := range names {
			if name == n {
				return r[i]
			}
		}
		t.Fatalf("no column %s", n)
		return nil
	}
	// The service reports one balance per customer and product; the ledger
	// keeps it per wallet: the wallets' closing balances add up to it.
	var closing float64
	found := 0
	for _, r := range rows {
		if col(r, "customer_id") != customer || col(r, "product_id") != product {
			continue
		}
		found++
		closing += value.Number(col(r, "closing"))
		if reported := value.Number(col(r, "reported_balance")); reported != before+50000 {
			t.Errorf("reported %v, want %v", reported, before+50000)
		}
		if v := col(r, "reconciliation"); v != "OK" {
			t.Errorf("reconciliation %v (ledger at report %v, difference %v, reported at %v), want OK",
				v, col(r, "ledger_at_report"), col(r, "difference"), col(r, "reported_at"))
		}
	}
	if found == 0 || closing != before+50000 {
		t.Fatalf("%d rows of the topped-up balance closing at %v, want %v", found, closing, before+50000)
	}
	f, err := excelize.OpenFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	summary, _ := f.GetRows("Summary")
	if !hasRow(summary, "Reported balances that MISMATCH: 0 of") {
		t.Errorf("summary does not count the mismatches: %v", summary)
	}
}

func hasRow(rows [][]string, text string) bool {
	for _, r := range rows {
		for _, c := range r {
			if strings.Contains(c, text) {
				return true
			}
		}
	}
	return false
}

func jakarta(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestCreditTopUpNotInLedgerYet: a job tops up a product the customer never
// held, and the report runs before a sync reads that customer's credit history
// again. The balance has no ledger row yet, but it is the job's customer and
// product: the sheets print their names (and say the wallet is not in the
// ledger yet), never blank names; from the warehouse's customers and products,
// or, where this warehouse copy does not hold them, as the job's plan saw them.
func TestCreditTopUpNotInLedgerYet(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "billsync.duckdb")
	journal := filepath.Join(dir, jobs.JournalFile)
	sb, err := sandbox.New(sandbox.Options{Seed: 7, Scale: 0.05, Now: firstSync, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	defer srv.Close()
	client, err := api.New(api.Config{BaseURL: srv.URL, APIKey: testKey, Unlimited: true,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syncrun.Run(ctx, db, []syncrun.Account{{Name: "main", Client: client}},
		syncrun.Options{Options: fetch.Options{Fetch: config.Fetch{PageSize: 100, Concurrency: 4, Details: true}, Account: "main", Log: quiet}}); err != nil {
		t.Fatal(err)
	}
	// A customer and an active credit-usage product it holds no credit of.
	var customer, customerName, product, productName string
	func() {
		h, err := warehouse.OpenReadOnly(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		err = h.QueryRowContext(ctx, `SELECT c.id, c.name, p.id, p.name FROM customers c, products p
			WHERE c.account = 'main' AND p.account = 'main' AND p.sub_type = 'credit_usage' AND p.status = 'active'
			  AND c.deleted_upstream_at IS NULL AND p.deleted_upstream_at IS NULL AND coalesce(c.name, '') <> ''
			  AND NOT EXISTS (SELECT 1 FROM credit_ledger l WHERE l.customer_id = c.id AND l.product_id = p.id)
			ORDER BY c.id, p.id LIMIT 1`).Scan(&customer, &customerName, &product, &productName)
		if err != nil {
			t.Fatal(err)
		}
	}()
	input := filepath.Join(dir, "topup.csv")
	if err := os.WriteFile(input, []byte(fmt.Sprintf("customerId,productId,amount\n%s,%s,25000\n", customer, product)), 0o644); err != nil {
		t.Fatal(err)
	}
	sb.Advance(time.Hour)
	func() {
		j, err := jobs.OpenJournal(ctx, journal)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		wh, err := warehouse.OpenReadOnly(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := j.Plan(ctx, wh, jobs.PlanOptions{Kind: jobs.CreditTopup, Input: input, Account: "main", User: "t", Host: "h"})
		wh.Close()
		if err != nil {
			t.Fatal(err)
		}
		res, err := j.Apply(ctx, plan.ID, jobs.ApplyOptions{Client: client, Account: "main", BaseURL: srv.URL, User: "t", Host: "h", Log: quiet,
			Now: sb.Now}) // billsync's clock is the simulator's, which stands in the past
		if err != nil || res.Status != jobs.RunCompleted {
			t.Fatalf("apply: %+v %v", res, err)
		}
	}()
	// No sync: the warehouse's ledger copy does not have the top-up yet.
	asOf := firstSync.Add(2 * time.Hour).In(jakarta(t))
	for _, c := range []struct {
		name string
		drop bool // the warehouse copy holds neither the customer nor the product
	}{{"in the warehouse", false}, {"not in this warehouse copy", true}} {
		t.Run(c.name, func(t *testing.T) {
			if c.drop {
				execDB(t, db, "DELETE FROM customers WHERE id = '"+customer+"'", "DELETE FROM products WHERE id = '"+product+"'")
			}
			files, err := Generate(ctx, Options{Report: config.Report{ReportsOut: filepath.Join(dir, "out", c.name), Locale: "en"}, DB: db, Names: []string{"credit"},
				AsOf: asOf, Log: quiet, Formats: []string{"xlsx"}})
			if err != nil {
				t.Fatal(err)
			}
			checkTopUpNames(t, files[0], customer, customerName, product, productName)
		})
	}
}

// checkTopUpNames: the rows of a topped-up customer and product on Balances,
// By product and Reconciliation carry their names.
func checkTopUpNames(t *testing.T, file, customer, customerName, product, productName string) {
	t.Helper()
	f, err := excelize.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, sheet := range []string{"Balances", "By product", "Reconciliation"} {
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatalf("sheet %s: %v", sheet, err)
		}
		head := map[string]int{}
		for i, h := range rows[0] {
			head[h] = i
		}
		cell := func(r []string, name string) string {
			i, ok := head[name]
			if !ok {
				t.Fatalf("sheet %s: no column %q in %v", sheet, name, rows[0])
			}
			if i < len(r) {
				return r[i]
			}
			return ""
		}
		found := false
		for _, r := range rows[1:] {
			if cell(r, "Product ID") != product || (sheet != "By product" && cell(r, "Customer ID") != customer) ||
				(sheet == "By product" && cell(r, "Wallet") != "(not in the ledger yet)") {
				continue
			}
			found = true
			if got := cell(r, "Product"); !strings.HasPrefix(got, productName) {
				t.Errorf("sheet %s: product %q, want %q", sheet, got, productName)
			}
			if sheet != "By product" && !strings.HasPrefix(cell(r, "Customer"), customerName) {
				t.Errorf("sheet %s: customer %q, want %q", sheet, cell(r, "Customer"), customerName)
			}
			if sheet != "Reconciliation" && cell(r, "Wallet") != "(not in the ledger yet)" {
				t.Errorf("sheet %s: wallet %q, want (not in the ledger yet)", sheet, cell(r, "Wallet"))
			}
		}
		if !found {
			t.Errorf("sheet %s: no row of the topped-up customer %s and product %s", sheet, customer, product)
		}
	}
}
