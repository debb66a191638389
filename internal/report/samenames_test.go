package report

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"

	"github.com/xuri/excelize/v2"
)

// TestSameNamesToldApartInPrint: the ID columns are out of print, so two customers (or
// products) of one name must differ in what is printed. On every sheet of every workbook
// that names customers or products, each printed name stands for one ID; a name nobody else
// carries is printed as it is; the CSVs, which carry the ID, keep the name as it is.
const longName = "Paket Langganan Tahunan Premium Untuk Usaha Menengah di Jakarta"

// lookAlike names the k-th customer of credit (after those the test renames otherwise).
func lookAlike(k int, name string) string {
	return fmt.Sprintf(`UPDATE customers SET name = '%s' WHERE id = (SELECT customer_id FROM credit_ledger
		GROUP BY customer_id ORDER BY customer_id LIMIT 1 OFFSET %d)`, name, k+5)
}

func TestSameNamesToldApartInPrint(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	// Two namesakes differing in case and spacing only (a reader sees one name), and one
	// customer whose name is its own.
	execDB(t, db,
		`UPDATE customers SET name = CASE WHEN hash(id) % 2 = 0 THEN 'Budi Santoso' ELSE 'budi  santoso' END
		 WHERE id IN (SELECT customer_id FROM credit_ledger ORDER BY customer_id LIMIT 2 OFFSET 0)`,
		`UPDATE customers SET name = 'Satu-satunya Nama' WHERE id = (SELECT max(customer_id) FROM credit_ledger)`,
		// Names that a reader takes for Budi Santoso: a zero-width space, a right-to-left
		// override that draws the reversed name the right way round, a Cyrillic В.
		lookAlike(0, "Budi\u200b Santoso"), lookAlike(1, "\u202eosotnaS iduB"), lookAlike(2, "Вudi Santoso"),
		`UPDATE products SET name = '`+longName+`' WHERE id IN (SELECT product_id FROM credit_ledger GROUP BY product_id ORDER BY product_id LIMIT 2)`,
		// one product of credit, and one the credit report does not list whose name looks the
		// same (a Cyrillic о)
		`UPDATE products SET name = 'Produk Sendiri' WHERE id = (SELECT max(product_id) FROM credit_ledger)`,
		`UPDATE products SET name = 'Prоduk Sendiri' WHERE id = (SELECT max(id) FROM products WHERE id NOT IN (SELECT product_id FROM credit_ledger))`)
	files := generateAll(t, Options{DB: db})
	long := 0
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	checked, alone, lookAlikes := 0, 0, 0
	for _, d := range defs {
		for _, s := range d.Sheets {
			for _, c := range s.Columns {
				if c.TellApart == "" {
					continue
				}
				base := fileBase(d, &settings{asOf: "2026-06-05"})
				f, err := excelize.OpenFile(findFile(t, files, base+".xlsx"))
				if err != nil {
					t.Fatal(err)
				}
				rows, err := f.GetRows(s.tab("id"))
				if err != nil {
					t.Fatal(err)
				}
				name, id := -1, -1
				for i, h := range rows[0] {
					switch h {
					case c.Title.In("id"):
						name = i
					case s.column(c.TellApart).Title.In("id"):
						id = i
					}
				}
				if name < 0 || id < 0 {
					t.Fatalf("%s %s: no %s or %s column in %v", d.Name, s.Name, c.Name, c.TellApart, rows[0])
				}
				colName, _ := excelize.ColumnNumberToName(name + 1)
				width, err := f.GetColWidth(s.tab("id"), colName)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				ids := map[string]string{}
				for _, r := range rows[1:] {
					if id >= len(r) || r[id] == "" {
						continue // totals, or a payment request without a customer
					}
					if i := strings.IndexFunc(r[name], cellsafe.Invisible); i >= 0 {
						t.Errorf("%s %s: %q: a character drawn as nothing is printed as it is", d.Name, s.Name, r[name])
					}
					// what a reader takes the printed name for
					printed := nameKey(cellsafe.Undo(r[name]))
					if strings.Contains(r[name], "⟦U+") || strings.HasPrefix(r[name], "Вudi") {
						lookAlikes++
					}
					if other, ok := ids[printed]; ok && other != r[id] {
						t.Errorf("%s %s: %q printed for %s and %s", d.Name, s.Name, r[name], other, r[id])
					}
					ids[printed] = r[id]
					checked++
					if r[name] == "Satu-satunya Nama" {
						alone++
					}
					if (strings.HasPrefix(printed, "budi santoso") || strings.HasPrefix(r[name], longName[:20])) && !strings.HasSuffix(r[name], "…)") {
						t.Errorf("%s %s: %q printed without its ID", d.Name, s.Name, r[name])
					}
					if strings.HasPrefix(r[name], longName[:20]) {
						// a long name is cut, not the ID's start, and the column is as wide as both
						long++
						if n := float64(utf8.RuneCountInString(r[name])); n > maxTextWidth+idStartWidth || width < n {
							t.Errorf("%s %s: %q (%v characters) in a column %v wide", d.Name, s.Name, r[name], n, width)
						}
					}
				}
			}
		}
	}
	if checked < 100 || alone == 0 || long == 0 || lookAlikes == 0 {
		t.Fatalf("%d names checked, the unshared name printed as it is %d times, the long one %d times, look-alikes %d times",
			checked, alone, long, lookAlikes)
	}
	// The summary's headline line names the product as its sheet prints it.
	f, err := excelize.OpenFile(findFile(t, files, "credit_2026-06-05.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	byProduct, _ := f.GetRows(sheetOf(t, "credit", "By product").tab("id"))
	summary, _ := f.GetRows(langs["id"].w("summary"))
	f.Close()
	var printed string
	for _, r := range byProduct {
		if strings.HasPrefix(r[0], "Produk Sendiri") {
			printed = r[0]
		}
	}
	if !strings.HasSuffix(printed, "…)") {
		t.Fatalf("By product prints %q for a name two products carry", printed)
	}
	if !slices.ContainsFunc(summary, func(r []string) bool { return len(r) > 0 && strings.HasPrefix(r[0], printed+" · ") }) {
		t.Errorf("no headline line names %q as By product prints it", printed)
	}
	seen := map[string]bool{}
	for _, c := range cellsOf(t, findFile(t, files, "credit_2026-06-05_balances.csv"), "") {
		if strings.Contains(c, "…)") {
			t.Errorf("credit balances CSV: %q: the CSV carries the ID, the name stays as it is", c)
		}
		if strings.IndexFunc(c, cellsafe.Invisible) >= 0 {
			t.Errorf("credit balances CSV: %q: a character drawn as nothing is written as it is", c)
		}
		seen[c] = true
	}
	// The CSV keeps the name, with what cannot be seen shown by its code.
	for _, want := range []string{"Budi⟦U+200B⟧ Santoso", "⟦U+202E⟧osotnaS iduB", "Вudi Santoso"} {
		if !seen[want] {
			t.Errorf("credit balances CSV has no cell %q", want)
		}
	}
}

// TestSameNamesIDStart: a shared name's IDs get as much of their start as tells them apart, the
// same for every way the name is written; a name one ID carries, from however many lists, is
// not shared.
func TestSameNamesIDStart(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE customers (account VARCHAR, id VARCHAR, name VARCHAR)`,
		`CREATE TABLE invoices (account VARCHAR, customer_id VARCHAR, customer_name VARCHAR)`,
		`CREATE TABLE unpaid_transactions (account VARCHAR, customer_id VARCHAR, customer_name VARCHAR)`,
		`CREATE TABLE reviews (account VARCHAR, customer_id VARCHAR, customer_name VARCHAR, payment_link_id VARCHAR, product_name VARCHAR)`,
		`CREATE TABLE products (account VARCHAR, id VARCHAR, name VARCHAR)`,
		`INSERT INTO customers VALUES ('a', 'abcdefgh-1111', 'Budi Santoso'), ('a', 'abcdefgh-2222', 'Budi Santoso'),
			('a', 'c-1', 'Ani'), ('a', 'c-9', 'Citra')`,
		`INSERT INTO invoices VALUES ('a', 'zz000000-0000', ' budi   santoso'), ('a', 'c-1', 'Ani'), ('a', 'c-2', 'Dewi')`,
		`INSERT INTO unpaid_transactions VALUES ('a', 'c-2', 'Dewi'), ('b', 'c-2', 'Dewi')`,
		`INSERT INTO reviews VALUES ('a', 'c-9', 'Citra', 'p-2', 'Zakat'), ('a', NULL, 'Eko', 'p-3', NULL)`,
		`INSERT INTO products VALUES ('a', 'p-1', 'Zakat'), ('a', 'p-3', 'Infaq')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n, err := loadSameNames(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ kind, name, id, want string }{
		{"customer", "Budi Santoso", "abcdefgh-1111", " (abcdefgh-111…)"}, // the first eight alike
		{"customer", " budi   santoso", "zz000000-0000", " (zz000000-000…)"},
		{"customer", "Ani", "c-1", ""},        // one customer, named by two lists
		{"customer", "Dewi", "c-2", " (c-2)"}, // one ID in two accounts: two customers
		{"customer", "Citra", "c-9", ""},
		{"product", "Zakat", "p-1", " (p-1)"}, // the product list and a review's payment link
		{"product", "Infaq", "p-3", ""},
	} {
		if got, ok := n.label(tc.kind, tc.name, tc.id); got != tc.name+tc.want || ok != (tc.want != "") {
			t.Errorf("%s %q (%s): printed %q (%v), want %q", tc.kind, tc.name, tc.id, got, ok, tc.name+tc.want)
		}
	}
}
