package jobs_test

import (
	"database/sql"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
	_ "github.com/duckdb/duckdb-go/v2"
)

// fileWords are the column titles and labels a person finds in a job file, per locale: the reader
// below finds every figure by them, as a person does, not by the writer's column keys.
var fileWords = map[string]map[string]string{
	"id": {"row": "Baris", "state": "Status", "change": "Perubahan", "amount": "amount", "balance": "Saldo per sinkronisasi",
		"customer": "customerId", "product": "productId", "action": "ID aksi (kunci idempotensi)", "reported": "Saldo dilaporkan",
		"products": "Produk", "total": "Total", "sheetPlan": "Rencana", "sheetResult": "Hasil", "summary": "Ringkasan",
		"planned": "direncanakan", "sent": "Dikirim"},
	"en": {"row": "Row", "state": "State", "change": "Change", "amount": "amount", "balance": "Balance at last sync",
		"customer": "customerId", "product": "productId", "action": "Action ID (idempotency key)", "reported": "Reported balance",
		"products": "Product", "total": "Total", "sheetPlan": "Plan", "sheetResult": "Result", "summary": "Summary",
		"planned": "planned", "sent": "Sent"},
}

// TestJobFilesFiguresMatchTheirSources reads the plan and result files of a top-up (with held rows
// beside planned ones) back as a person does, without the code that wrote them, in both locales and
// as .xlsx and .csv, and checks every figure against the same quantity computed here by SQL of its
// own over the warehouse and the job journal: each row's balance at the last sync, the change it
// states (before, after, the amount), the products' totals on the summary and the balance the
// service reported for each sent row. A figure under the wrong label, a row missing or a total that
// does not add up fails it.
func TestJobFilesFiguresMatchTheirSources(t *testing.T) {
	e := newEnv(t)
	held, applied, run := heldTopUp(t, e)
	wh, err := sql.Open("duckdb", e.wh+"?access_mode=READ_ONLY")
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	// the journal is closed by the time the files are read: attach it read-only, as an analyst does
	jr, err := sql.Open("duckdb", e.journal+"?access_mode=READ_ONLY")
	if err != nil {
		t.Fatal(err)
	}
	defer jr.Close()

	balanceAtSync := func(customer, product string) int64 {
		var b sql.NullFloat64
		if err := wh.QueryRow(`SELECT sum(credit) - sum(debit) FROM credit_ledger
			WHERE customer_id = ? AND product_id = ? AND deleted_upstream_at IS NULL`, customer, product).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return int64(b.Float64)
	}
	planRows := map[string]planRow{} // by action id
	rows, err := jr.Query(`SELECT a.action_id, (a.request->>'amount')::BIGINT, s.state
		FROM job_plan_actions a JOIN job_action_state s USING (plan_id, action_id) WHERE a.plan_id = ?`, held.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var r planRow
		if err := rows.Scan(&id, &r.amount, &r.state); err != nil {
			t.Fatal(err)
		}
		planRows[id] = r
	}
	rows.Close()
	if len(planRows) != len(held.Actions) {
		t.Fatalf("the journal has %d rows of plan %s, the plan %d", len(planRows), held.ID, len(held.Actions))
	}
	changeRE := regexp.MustCompile(`^(?:saldo|balance) ([\d.,]+) → ([\d.,]+) \(\+([\d.,]+)\)$`)

	for _, locale := range []string{"id", "en"} {
		words := fileWords[locale]
		o := jobs.FileOptions{Locale: locale, Location: jakarta(t)}
		dir := t.TempDir()
		for _, ext := range []string{".xlsx", ".csv"} {
			name := locale + " plan" + ext
			path := filepath.Join(dir, "plan"+ext)
			if err := jobs.WriteTableFile(path, jobs.PlanTable(held, o), o); err != nil {
				t.Fatal(err)
			}
			data, summary := readJobFile(t, path, words["sheetPlan"], words["summary"])
			col := header(t, name, data[0], words)
			seen := map[string]bool{}
			for i, r := range data[1:] {
				at := func(k string) string { return r[col[k]] }
				id := at("action")
				want, ok := planRows[id]
				if !ok {
					t.Errorf("%s row %d: action %q is no row of plan %s in the journal", name, i+1, id, held.ID)
					continue
				}
				seen[id] = true
				if got := number(t, at("amount")); got != want.amount {
					t.Errorf("%s row %d: %s %d, the journal sends %d", name, i+1, words["amount"], got, want.amount)
				}
				sync := balanceAtSync(at("customer"), at("product"))
				if got := number(t, at("balance")); got != sync {
					t.Errorf("%s row %d: %s %d, the warehouse says %d", name, i+1, words["balance"], got, sync)
				}
				if want.state != "planned" {
					continue
				}
				m := changeRE.FindStringSubmatch(at("change"))
				if m == nil {
					t.Errorf("%s row %d: %s %q does not say before → after (+amount)", name, i+1, words["change"], at("change"))
					continue
				}
				before, after, plus := number(t, m[1]), number(t, m[2]), number(t, m[3])
				if before != sync || plus != want.amount || after != before+plus {
					t.Errorf("%s row %d: %s %q: want %d → %d (+%d) from the warehouse and the journal", name, i+1,
						words["change"], at("change"), sync, sync+want.amount, want.amount)
				}
			}
			if len(seen) != len(planRows) {
				t.Errorf("%s: %d rows, the journal has %d", name, len(seen), len(planRows))
			}
			if summary != nil {
				checkPlanTotals(t, name, summary, words, planRows)
			}
		}

		// The result: each sent row's reported balance is the one the journal keeps from the service's answer.
		path := filepath.Join(dir, "result.xlsx")
		if err := jobs.WriteTableFile(path, jobs.ResultTable(applied, run, o), o); err != nil {
			t.Fatal(err)
		}
		data, _ := readJobFile(t, path, words["sheetResult"], words["summary"])
		col := header(t, locale+" result", data[0], words)
		for i, r := range data[1:] {
			var reported float64
			if err := jr.QueryRow(`SELECT balance FROM credit_balance_reports WHERE action_id = ?`, r[col["action"]]).Scan(&reported); err != nil {
				t.Fatalf("%s result row %d: action %s has no reported balance in the journal: %v", locale, i+1, r[col["action"]], err)
			}
			if got := number(t, r[col["reported"]]); got != int64(reported) {
				t.Errorf("%s result row %d: %s %d, the journal says the service reported %d", locale, i+1, words["reported"], got, int64(reported))
			}
		}
		if len(data)-1 != len(applied.Actions) {
			t.Errorf("%s result: %d rows, the plan has %d", locale, len(data)-1, len(applied.Actions))
		}
	}
}

// planRow is a plan's row as the journal keeps it.
type planRow struct {
	amount int64
	state  string
}

// checkPlanTotals reads the summary's products table (title row, a row per product, the total) and
// checks its total row against the journal's rows: rows, rows still to send, credit, credit still to
// send; the products' rows must add up to it.
func checkPlanTotals(t *testing.T, name string, summary [][]string, words map[string]string, rows map[string]planRow) {
	t.Helper()
	var want [4]int64
	for _, r := range rows {
		want[0]++
		want[2] += r.amount
		if r.state == "planned" || r.state == "not_applied" {
			want[1]++
			want[3] += r.amount
		}
	}
	var sum [4]int64
	in := false
	for _, r := range summary {
		switch {
		case len(r) > 0 && r[0] == words["products"]:
			in = true
		case in && len(r) >= 5 && r[0] == words["total"]:
			for k := range 4 {
				if got := number(t, r[k+1]); got != want[k] || sum[k] != want[k] {
					t.Errorf("%s summary total column %d: %d (products add up to %d), the journal says %d", name, k+2, got, sum[k], want[k])
				}
			}
			return
		case in && len(r) >= 5:
			for k := range 4 {
				sum[k] += number(t, r[k+1])
			}
		}
	}
	t.Errorf("%s: no products table with a %q row on the summary:\n%q", name, words["total"], summary)
}

// readJobFile is the data sheet's rows and the summary's (nil for a CSV, which has the data alone).
func readJobFile(t *testing.T, path, dataSheet, summarySheet string) (data, summary [][]string) {
	t.Helper()
	if strings.HasSuffix(path, ".xlsx") {
		cells := workbookCells(t, path)
		data, summary = cells[dataSheet], cells[summarySheet]
		if data == nil || summary == nil {
			t.Fatalf("%s: no sheet %q or %q", path, dataSheet, summarySheet)
		}
		return data, summary
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	data, err = r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(data) > 0 && len(data[0]) > 0 {
		data[0][0] = strings.TrimPrefix(data[0][0], "\ufeff")
	}
	return data, nil
}

// header finds each column a person looks for by its title.
func header(t *testing.T, name string, titles []string, words map[string]string) map[string]int {
	t.Helper()
	col := map[string]int{}
	for _, k := range []string{"state", "change", "amount", "balance", "customer", "product", "action", "reported"} {
		for i, h := range titles {
			if h == words[k] {
				col[k] = i
			}
		}
	}
	for _, k := range []string{"action"} {
		if _, ok := col[k]; !ok {
			t.Fatalf("%s: no column %q in %q", name, words[k], titles)
		}
	}
	return col
}

// number reads a figure as printed: digits grouped with dots or commas, no decimals.
func number(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.NewReplacer(".", "", ",", "").Replace(strings.TrimSpace(s)), 10, 64)
	if err != nil {
		t.Fatalf("figure %q: %v", s, err)
	}
	return n
}
