package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/report/csvout"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
)

// asOf is the report date of the goldens: the last day before the second sync,
// whose end (midnight in Jakarta) is the second sync's observation time.
var asOfVars = map[string]string{"as_of": "2026-06-05", "tz": "Asia/Jakarta"}

// render is a query result as text: a header line and one line per row.
func render(names []string, rows [][]any) string {
	var b strings.Builder
	b.WriteString(strings.Join(names, " | ") + "\n")
	for _, r := range rows {
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = csvout.Value(v, kindOfValue(v), time.UTC)
		}
		b.WriteString(strings.Join(parts, " | ") + "\n")
	}
	return b.String()
}

func kindOfValue(v any) value.Kind {
	if t, ok := v.(time.Time); ok && t.Equal(t.Truncate(24*time.Hour)) {
		return value.KindDate
	}
	return value.KindTime
}

// TestQueryGoldens runs every query file against the simulator's warehouse
// and compares the result with testdata/golden/<query>.golden (-update rewrites).
func TestQueryGoldens(t *testing.T) {
	w := testWorld(t)
	files, _ := fs.Glob(queries.FS, "*.sql")
	for _, f := range files {
		if f == "report_sources.sql" || f == "dq_sync_runs.sql" {
			continue // sync_runs carry the wall clock, not the simulated one
		}
		t.Run(f, func(t *testing.T) {
			names, rows := queryRows(t, w.db, f, asOfVars, "")
			got := render(names, rows)
			path := filepath.Join("testdata", "golden", strings.TrimSuffix(f, ".sql")+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (-update rewrites it):\n%s", f, path, firstDiff(got, string(want)))
			}
		})
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, a, b)
		}
	}
	return ""
}

// TestAgingMatchesSimulator recomputes the aging in Go from the simulator's
// own unpaid transactions and compares bucket by bucket.
func TestAgingMatchesSimulator(t *testing.T) {
	w := testWorld(t)
	jakarta, _ := time.LoadLocation("Asia/Jakarta")
	asOf := time.Date(2026, 6, 5, 0, 0, 0, 0, time.UTC)
	var want [5]int64
	var wantItems int64
	for _, raw := range w.truth["unpaid_transactions"] {
		var u struct {
			CreatedAt int64 `json:"createdAt"`
			Amount    int64 `json:"amount"`
		}
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		created := time.UnixMilli(u.CreatedAt).In(jakarta)
		due := created.AddDate(0, 0, 14)
		dueDay := time.Date(due.Year(), due.Month(), due.Day(), 0, 0, 0, 0, time.UTC)
		days := int(asOf.Sub(dueDay).Hours() / 24)
		b := 0
		switch {
		case days <= 0:
		case days <= 30:
			b = 1
		case days <= 60:
			b = 2
		case days <= 90:
			b = 3
		default:
			b = 4
		}
		want[b] += u.Amount
		wantItems++
	}
	if wantItems == 0 {
		t.Fatal("the simulator has no unpaid transactions: the test proves nothing")
	}
	names, rows := queryRows(t, w.db, "aging_by_customer.sql", asOfVars, "")
	var got [5]int64
	var items, outstanding int64
	for _, r := range rows {
		items += r[slices.Index(names, "items")].(int64)
		outstanding += r[slices.Index(names, "outstanding")].(int64)
		for b := range 5 {
			got[b] += r[slices.Index(names, fmt.Sprintf("bucket_%d", b))].(int64)
		}
	}
	if got != want || items != wantItems {
		t.Errorf("buckets %v over %d items, simulator says %v over %d", got, items, want, wantItems)
	}
	if sum := got[0] + got[1] + got[2] + got[3] + got[4]; sum != outstanding {
		t.Errorf("buckets sum to %d, outstanding is %d", sum, outstanding)
	}
}

// TestAgingPastDateUsesHistory: the aging as of the first sync's day, computed
// from the warehouse five days later, equals what the first sync's warehouse said.
func TestAgingPastDateUsesHistory(t *testing.T) {
	w := testWorld(t)
	vars := map[string]string{"as_of": "2026-05-31", "tz": "Asia/Jakarta"}
	for _, f := range []string{"aging_detail.sql", "aging_by_customer.sql"} {
		n1, then := queryRows(t, w.firstDB, f, vars, "")
		n2, now := queryRows(t, w.db, f, vars, "")
		if len(then) == 0 {
			t.Fatalf("%s: nothing open at the first sync: the test proves nothing", f)
		}
		if a, b := render(n1, then), render(n2, now); a != b {
			t.Errorf("%s as of 2026-05-31 differs between the first sync's warehouse and today's:\n%s", f, firstDiff(b, a))
		}
	}
	_, today := queryRows(t, w.db, "aging_detail.sql", asOfVars, "")
	_, past := queryRows(t, w.db, "aging_detail.sql", vars, "")
	if render(nil, today) == render(nil, past) {
		t.Error("aging as of two dates five days apart is identical: history is not used")
	}
}

// TestCreditBalancesReconcile: closing = opening + credits - debits on every
// row, and the closing balances equal the simulator's ledger.
func TestCreditBalancesReconcile(t *testing.T) {
	w := testWorld(t)
	names, rows := queryRows(t, w.db, "credit_balances.sql", asOfVars, "")
	if len(rows) == 0 {
		t.Fatal("no credit balances: the test proves nothing")
	}
	col := func(r []any, n string) *big.Rat {
		v := r[slices.Index(names, n)]
		x, _ := new(big.Rat).SetString(v.(value.Decimal).String())
		return x
	}
	got := map[string]*big.Rat{}
	for _, r := range rows {
		sum := new(big.Rat)
		for _, c := range []string{"opening", "topup", "merchant_topup", "trial_topup", "other_credits"} {
			sum.Add(sum, col(r, c))
		}
		for _, c := range []string{"usage", "expired_void", "other_debits"} {
			sum.Sub(sum, col(r, c))
		}
		if closing := col(r, "closing"); sum.Cmp(closing) != 0 {
			t.Errorf("row %v: opening + credits - debits = %s, closing %s", r[:7], sum.RatString(), closing.RatString())
		}
		key := r[slices.Index(names, "customer_id")].(string) + "/" + r[slices.Index(names, "product_id")].(string)
		if got[key] == nil {
			got[key] = new(big.Rat)
		}
		got[key].Add(got[key], col(r, "closing"))
	}
	cutoff := secondSync
	want := map[string]*big.Rat{}
	for _, raw := range w.truth["credit_ledger"] {
		var l struct {
			CreatedAt             time.Time
			Credit, Debit         int64
			CustomerID, ProductID string
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		if !l.CreatedAt.Before(cutoff) {
			continue
		}
		key := l.CustomerID + "/" + l.ProductID
		if want[key] == nil {
			want[key] = new(big.Rat)
		}
		want[key].Add(want[key], big.NewRat(l.Credit-l.Debit, 1))
	}
	if len(got) != len(want) {
		t.Errorf("%d customer/product balances, simulator has %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] == nil || got[k].Cmp(v) != 0 {
			t.Errorf("%s: closing %v, simulator ledger says %s", k, got[k], v.RatString())
		}
	}
}

// TestDefaultsAgree: a variable's default in a report definition is the same
// literal its query files fall back to, so by-hand runs match the reports.
func TestDefaultsAgree(t *testing.T) {
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`SET VARIABLE (\w+) = coalesce\(getvariable\('(\w+)'\), '?([^')]*)'?\);`)
	for _, d := range defs {
		for _, sh := range d.Sheets {
			b, _ := fs.ReadFile(queries.FS, sh.Query)
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				i := slices.IndexFunc(d.Vars, func(v Var) bool { return v.Name == m[1] })
				if i < 0 || d.Vars[i].Default == "" {
					continue
				}
				if d.Vars[i].Default != m[3] {
					t.Errorf("%s: %s defaults to %s, reports/%s.yaml says %s", sh.Query, m[1], m[3], d.Name, d.Vars[i].Default)
				}
			}
		}
	}
}

// TestQueryFilesStandAlone: a report's sheets run at once, each on a connection of its own,
// so no query file may rely on a variable another file of its report sets: each reads only
// the variables Generate sets (as_of, tz, account and the report's own with a default) or those it sets
// itself, and a variable set by several files of a report falls back to the same default in
// each (the summary shows one value).
func TestQueryFilesStandAlone(t *testing.T) {
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	reads := regexp.MustCompile(`getvariable\('(\w+)'\)`)
	sets := regexp.MustCompile(`(?m)^SET VARIABLE (\w+) = (.*);$`)
	for _, d := range defs {
		given := map[string]bool{"as_of": true, "tz": true, "account": true}
		for _, v := range d.Vars {
			given[v.Name] = v.Default != "" // without a default the query file's applies
		}
		defaults := map[string]string{}
		for _, sh := range d.Sheets {
			b, err := fs.ReadFile(queries.FS, sh.Query)
			if err != nil {
				t.Fatal(err)
			}
			own := map[string]bool{}
			for _, m := range sets.FindAllStringSubmatch(string(b), -1) {
				own[m[1]] = true
				if prev, ok := defaults[m[1]]; ok && prev != m[2] {
					t.Errorf("report %s: %s sets %s = %s, another of its sheets = %s", d.Name, sh.Query, m[1], m[2], prev)
				}
				defaults[m[1]] = m[2]
			}
			for _, m := range reads.FindAllStringSubmatch(string(b), -1) {
				if !given[m[1]] && !own[m[1]] {
					t.Errorf("report %s: %s reads variable %s, which neither Generate nor the file sets", d.Name, sh.Query, m[1])
				}
			}
		}
	}
}

// TestDefinitionsCoverColumns: every column a query returns has a title and
// format in its definition, and every listed column exists.
func TestDefinitionsCoverColumns(t *testing.T) {
	w := testWorld(t)
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		for _, sh := range d.Sheets {
			names, _ := queryRows(t, w.db, sh.Query, asOfVars, "")
			for _, n := range names {
				if sh.column(n) == nil {
					t.Errorf("%s sheet %q: query column %s is not in the definition", d.Name, sh.Name, n)
				}
			}
			for _, c := range sh.Columns {
				if !slices.Contains(names, c.Name) {
					t.Errorf("%s sheet %q: defined column %s is not returned by %s", d.Name, sh.Name, c.Name, sh.Query)
				}
			}
		}
	}
}

// TestAccountVariable: every query file filtered to the warehouse's only account returns what
// it returns unfiltered, and filtered to another account only rows of no account (the macros'
// account parameter shares its name with a column: a body that named the column unqualified
// would compare the parameter with itself).
func TestAccountVariable(t *testing.T) {
	w := testWorld(t)
	files, _ := fs.Glob(queries.FS, "*.sql")
	for _, f := range files {
		if f == "report_sources.sql" || f == "dq_sync_runs.sql" {
			continue // wall-clock rows, as in TestQueryGoldens
		}
		t.Run(f, func(t *testing.T) {
			names, all := queryRows(t, w.db, f, asOfVars, "")
			_, main := queryRows(t, w.db, f, map[string]string{"as_of": asOfVars["as_of"], "tz": asOfVars["tz"], "account": "main"}, "")
			if a, b := render(names, all), render(names, main); a != b {
				t.Errorf("account=main differs from all accounts:\n%s", firstDiff(b, a))
			}
			_, none := queryRows(t, w.db, f, map[string]string{"as_of": asOfVars["as_of"], "tz": asOfVars["tz"], "account": "nobody"}, "")
			i := slices.Index(names, "account")
			for _, r := range none {
				if i >= 0 && r[i] != nil {
					t.Errorf("account=nobody returned a row of account %v", r[i])
					break
				}
			}
		})
	}
}

// TestOlderWarehouseMacros: on a warehouse an older billsync published, whose macros differ
// from this version's (here: one missing, the version stamp another), the queries run with this
// version's macros and give what they give on a current file.
func TestOlderWarehouseMacros(t *testing.T) {
	w := testWorld(t)
	old := filepath.Join(t.TempDir(), "old.duckdb")
	if err := copyFile(w.db, old); err != nil {
		t.Fatal(err)
	}
	execDB(t, old, "DROP MACRO TABLE aging_items",
		"CREATE OR REPLACE MACRO billsync_report_macros_version() AS 'older'",
		"CREATE OR REPLACE MACRO reviews_at(as_of, tz := '', account := NULL) AS TABLE SELECT 1 AS wrong")
	for _, f := range []string{"aging_detail.sql", "reviews_by_product.sql", "credit_balances.sql"} {
		n1, want := queryRows(t, w.db, f, asOfVars, "")
		n2, got := queryRows(t, old, f, asOfVars, "")
		if len(want) == 0 {
			t.Fatalf("%s: no rows: the test proves nothing", f)
		}
		if a, b := render(n1, want), render(n2, got); a != b {
			t.Errorf("%s on the older file:\n%s", f, firstDiff(b, a))
		}
	}
}

// TestEmailFixesEdgeCases: dq_email_fixes.sql on customers the simulator does not make: no
// e-mail (twice: the same fromEmail), blanks, a cleaned address that is another customer's, one
// that is the customer's own, two that clean to the same address, and one per account.
func TestEmailFixesEdgeCases(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	execDB(t, db, `INSERT INTO customers (account, id, email, name, created_at) VALUES
		('edge', 'c1', NULL, 'No mail', TIMESTAMPTZ '2026-01-01 00:00:01+00'),
		('edge', 'c2', NULL, 'No mail either', TIMESTAMPTZ '2026-01-01 00:00:02+00'),
		('edge', 'c3', '  ', 'Blank', TIMESTAMPTZ '2026-01-01 00:00:03+00'),
		('edge', 'c4', 'Budi @Mail.com', 'Budi typo', TIMESTAMPTZ '2026-01-01 00:00:04+00'),
		('edge', 'c5', 'budi@mail.com', 'Budi', TIMESTAMPTZ '2026-01-01 00:00:05+00'),
		('edge', 'c6', ' Sari@Mail.com ', 'Sari', TIMESTAMPTZ '2026-01-01 00:00:06+00'),
		('edge', 'c7', 'dua spasi@x.com', 'Dua', TIMESTAMPTZ '2026-01-01 00:00:07+00'),
		('edge', 'c8', 'duaspasi@x.com ', 'Dua lagi', TIMESTAMPTZ '2026-01-01 00:00:08+00'),
		('edge2', 'c11', 'Budi @Mail.com', 'Budi elsewhere', TIMESTAMPTZ '2026-01-01 00:00:11+00')`)
	names, rows := queryRows(t, db, "dq_email_fixes.sql", nil, "")
	col := func(name string) int {
		i := slices.Index(names, name)
		if i < 0 {
			t.Fatalf("no column %s in %v", name, names)
		}
		return i
	}
	show := []int{col("account"), col("customer_id"), col("fromEmail"), col("toEmail"), col("problem"), col("shared_with"), col("suggestion")}
	var got []string
	for _, r := range rows {
		if a, _ := r[show[0]].(string); !strings.HasPrefix(a, "edge") {
			continue
		}
		var f []string
		for _, i := range show {
			f = append(f, fmt.Sprintf("%v", r[i]))
		}
		got = append(got, strings.Join(f, " | "))
	}
	want := []string{
		"edge | c3 |    |  | empty | 0 | <nil>",
		// another customer's address once cleaned: suggested, not filled in
		"edge | c4 | Budi @Mail.com |  | malformed | 0 | budi@mail.com",
		// both clean to the same address: neither is filled in
		"edge | c7 | dua spasi@x.com |  | malformed | 0 | duaspasi@x.com",
		"edge | c8 | duaspasi@x.com  |  | malformed | 0 | duaspasi@x.com",
		// cleaned, it is the customer's own key: nobody else's, so filled in
		"edge | c6 |  Sari@Mail.com  | sari@mail.com | malformed | 0 | sari@mail.com",
		"edge | c1 | <nil> |  | empty; ambiguous | 0 | <nil>",
		"edge | c2 | <nil> |  | empty; ambiguous | 0 | <nil>",
		// budi@mail.com is another account's customer's: no collision here
		"edge2 | c11 | Budi @Mail.com | budi@mail.com | malformed | 0 | budi@mail.com",
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}
}

// TestStreamStopsWhenCanceled: a sheet's query stops soon after its context ends, not at the end
// of its rows (the rows are read from the driver directly, without database/sql's watch).
func TestStreamStopsWhenCanceled(t *testing.T) {
	w := testWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := warehouse.OpenReadOnly(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	conn, err := h.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := 0
	err = streamText(ctx, conn, "test.sql", "SELECT i, i::VARCHAR AS s FROM range(1000000) t(i)", func(result) error { return nil },
		func([]any) error {
			if n++; n == 10 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n > 10000 {
		t.Errorf("%d rows read after the context ended", n-10)
	}
}

// TestDeletedLabelsEveryEntity: dq_deleted.sql names a deleted record of every table a whole
// list or its child writes (internal/entity's catalog, so a new list is checked without a line
// here) as its declaration says: its Deleted expression, else its name, with its amount (the
// goldens have deleted unpaid transactions only).
func TestDeletedLabelsEveryEntity(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	// one record of each table, deleted on the as-of date, and what its label must be
	labels := map[string]string{}
	for _, d := range entity.All() {
		if d.Rule != entity.FullRefresh {
			continue
		}
		labels[d.TableName()] = declaredLabelQuery(d.TableName(), d.Fields, d.Deleted)
		for _, c := range d.Derived {
			labels[c.Table] = declaredLabelQuery(c.Table, c.Fields, c.Deleted)
		}
	}
	want := map[string]string{}
	var inserts []string
	h, err := warehouse.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for table, q := range labels {
		var id string
		var label, amount any
		if err := h.QueryRow(q+" ORDER BY id LIMIT 1").Scan(&id, &label, &amount); err != nil {
			t.Fatalf("%s: no row to delete: %v", table, err)
		}
		want[table+"/"+id] = fmt.Sprintf("%v | %v", label, amount)
		inserts = append(inserts, fmt.Sprintf(`INSERT INTO record_changes VALUES ('main', '%s', '%s', '_deleted', NULL, NULL, TIMESTAMPTZ '2026-06-05 10:00:00+00', 2)`, table, id))
	}
	h.Close()
	execDB(t, db, inserts...)
	names, rows := queryRows(t, db, "dq_deleted.sql", asOfVars, "")
	ei, ri, li, ai := slices.Index(names, "entity"), slices.Index(names, "record_id"), slices.Index(names, "label"), slices.Index(names, "amount")
	got := map[string]string{}
	for _, r := range rows {
		if k := fmt.Sprintf("%v/%v", r[ei], r[ri]); want[k] != "" {
			got[k] = fmt.Sprintf("%v | %v", r[li], r[ai])
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: label | amount %q, want %q", k, got[k], v)
		}
	}
}

// declaredLabelQuery selects a row's id, label and amount as the declaration of its table says
// dq_deleted names it: the Deleted expression over x, else a text name column; an integer amount
// column.
func declaredLabelQuery(table string, fields []entity.Field, deleted string) string {
	label, amount := "NULL", "NULL"
	has := func(col string, typ entity.Type) bool {
		return slices.ContainsFunc(fields, func(f entity.Field) bool { return f.Col == col && f.Type == typ })
	}
	switch {
	case deleted != "":
		label = deleted
	case has("name", entity.Text):
		label = "x.name"
	}
	if has("amount", entity.Int) {
		amount = "x.amount"
	}
	return fmt.Sprintf("SELECT id, (%s)::VARCHAR, (%s)::BIGINT FROM %s x", label, amount, table)
}

// TestNamesInDictionaryOrder: staff read a list of names as a dictionary, ignoring case, an
// accented initial with its plain letter ('Ñoño' after 'Nina', not after 'Zaki'). Every query
// file that sorts by a customer's or product's name does so, the ID breaking ties.
func TestNamesInDictionaryOrder(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	// In dictionary order; names of one rank differ in case only.
	order := [][]string{{"agus"}, {"Dewi"}, {"Édi"}, {"Fajar"}, {"Nina"}, {"Ñoño"}, {"Oki"}, {"Öz"},
		{"Putri"}, {"Şahin"}, {"Sari"}, {"Tono"}, {"Yusuf"}, {"zaki", "Zaki"}}
	rank := map[string]int{}
	var all []string
	for i, names := range order {
		for _, n := range names {
			rank[n] = i
			all = append(all, "'"+n+"'")
		}
	}
	pick := "([" + strings.Join(all, ",") + "])[1 + (hash(%s) %% " + strconv.Itoa(len(all)) + ")::BIGINT]"
	execDB(t, db,
		`UPDATE customers SET name = `+fmt.Sprintf(pick, "id"),
		`UPDATE invoices SET customer_name = `+fmt.Sprintf(pick, "customer_id"),
		`UPDATE unpaid_transactions SET customer_name = `+fmt.Sprintf(pick, "customer_id"),
		`UPDATE payment_requests SET name = `+fmt.Sprintf(pick, "id"),
		`UPDATE products SET name = `+fmt.Sprintf(pick, "id"))
	for _, tc := range []struct {
		file, name, id string
		names          int // shown at least: the test world's credit has few products
	}{
		{"aging_detail.sql", "customer_name", "customer_id", 10},
		{"credit_balances.sql", "customer_name", "customer_id", 10},
		{"credit_ledger_detail.sql", "customer_name", "customer_id", 8},
		{"credit_by_product.sql", "product_name", "product_id", 3},
	} {
		names, rows := queryRows(t, db, tc.file, asOfVars, "")
		n, id := slices.Index(names, tc.name), slices.Index(names, tc.id)
		seen := map[int]bool{}
		for i := 1; i < len(rows); i++ {
			a, _ := rows[i-1][n].(string)
			b, _ := rows[i][n].(string)
			if _, ok := rank[b]; !ok {
				if b != "" || rows[i][id] != nil {
					t.Fatalf("%s row %d: name %q is not one of the test's", tc.file, i+1, b)
				}
				continue // no customer: last
			}
			seen[rank[b]] = true
			switch ra, rb := rank[a], rank[b]; {
			case a == "":
				t.Errorf("%s row %d: %q after a row without a name", tc.file, i+1, b)
			case ra > rb:
				t.Errorf("%s row %d: %q after %q", tc.file, i+1, b, a)
			case ra == rb && idAfter(rows[i-1][id], rows[i][id]):
				t.Errorf("%s row %d: %q (%v) after %q (%v): same name, not by ID", tc.file, i+1, b, rows[i][id], a, rows[i-1][id])
			}
		}
		if len(seen) < tc.names {
			t.Errorf("%s: %d of the names shown: the test proves little", tc.file, len(seen))
		}
	}
}

// idAfter says ID a sorts after b, NULL last.
func idAfter(a, b any) bool {
	switch {
	case a == nil:
		return b != nil
	case b == nil:
		return false
	}
	return a.(string) > b.(string)
}
