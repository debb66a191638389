package report

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// TestSameNamesToldApartInPrint: the ID columns are out of print, so two customers (or
// products) of one name must differ in what is printed. On every sheet of every workbook
// that names customers or products, each printed name stands for one ID; a name nobody else
// carries is printed as it is; the CSVs, which carry the ID, keep the name as it is.
const longName = "Paket Langganan Tahunan Premium Untuk Usaha Menengah di Jakarta"

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
		`UPDATE products SET name = '`+longName+`' WHERE id IN (SELECT product_id FROM credit_ledger GROUP BY product_id ORDER BY product_id LIMIT 2)`,
		// one product of credit, and one of the same name the credit report does not list
		`UPDATE products SET name = 'Produk Sendiri' WHERE id IN ((SELECT max(product_id) FROM credit_ledger),
			(SELECT max(id) FROM products WHERE id NOT IN (SELECT product_id FROM credit_ledger)))`)
	files := generateAll(t, Options{DB: db})
	long := 0
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	checked, alone := 0, 0
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
					printed := strings.ToLower(strings.Join(strings.Fields(r[name]), " "))
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
	if checked < 100 || alone == 0 || long == 0 {
		t.Fatalf("%d names checked, the unshared name printed as it is %d times, the long one %d times", checked, alone, long)
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
	for _, c := range cellsOf(t, findFile(t, files, "credit_2026-06-05_balances.csv"), "") {
		if strings.Contains(c, "…)") {
			t.Errorf("credit balances CSV: %q: the CSV carries the ID, the name stays as it is", c)
		}
	}
}
