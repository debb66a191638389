package report

import (
	"context"
	"database/sql"
	"testing"
)

// TestNameKey: names a reader takes for one another have one key; names a reader tells apart
// keep theirs.
func TestNameKey(t *testing.T) {
	same := []string{
		"Budi Santoso", " budi   SANTOSO ", "Budi\u200b Santoso", "\u202eosotnaS iduB",
		"\u202eiduB\u202c \u202eosotnaS\u202c", "Вudi Santoso", "Budi Sаntоsо", "Ｂｕｄｉ　Ｓａｎｔｏｓｏ",
		"𝐁𝐮𝐝𝐢 Santoso", "Budi\u00a0Santoso", "\ufeffBudi Santoso\u2066\u2069", "Bu\u00addi Santoso",
		"Budi\u034f Santoso", "\u202bBudi Santoso\u202c", "\u2067Budi Santoso\u2069", "ΒUDΙ SANTOSO",
		"Budi\x00 Santoso", "\u202eosotnaS \u202dBudi\u202c\u202c", "Budi Santoso\ufe0f",
	}
	for _, s := range same {
		if got := nameKey(s); got != "budi santoso" {
			t.Errorf("nameKey(%q) = %q, want budi santoso", s, got)
		}
	}
	apart := []string{"Budi Santosa", "Budy Santoso", "Búdi Santoso", "Santoso Budi", "Budi Santoso Jr", "BudiSantoso",
		"Будi Santoso", "\u202bosotnaS iduB\u202c",
		"\u202e\u202dBudi\u202c osotnaS\u202c"} // the last drawn "Santoso Budi"
	for _, s := range apart {
		if got := nameKey(s); got == "budi santoso" {
			t.Errorf("nameKey(%q) = %q: a name a reader tells apart", s, got)
		}
	}
	for _, s := range []string{"", "\u200b", " \u202e\u202c "} {
		if got := nameKey(s); got != "" {
			t.Errorf("nameKey(%q) = %q, want nothing", s, got)
		}
	}
}

// TestLookAlikeNamesShared: in the warehouse's lists, a look-alike of a name counts as that
// name, for customers and products, with every way it is written labelled.
func TestLookAlikeNamesShared(t *testing.T) {
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
		"INSERT INTO customers VALUES ('a', 'c-1', 'Budi Santoso'), ('a', 'c-2', 'Budi\u200b Santoso'), " +
			"('a', 'c-3', '\u202eosotnaS iduB'), ('a', 'c-4', 'Вudi Santoso'), ('a', 'c-5', 'Ani'), ('a', 'c-6', '\u200b')",
		"INSERT INTO invoices VALUES ('a', 'c-5', 'Аni')", // the same customer, a Cyrillic А: one customer
		`INSERT INTO unpaid_transactions VALUES ('a', 'c-7', 'Citra')`,
		`INSERT INTO reviews VALUES ('a', 'c-8', 'Cіtra', 'p-2', 'Ｚａｋａｔ')`,
		`INSERT INTO products VALUES ('a', 'p-1', 'Zakat')`,
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
	// a second load on another connection finds the function registered
	conn2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if _, err := loadSameNames(ctx, conn2); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ kind, name, id, want string }{
		{"customer", "Budi Santoso", "c-1", " (c-1)"},
		{"customer", "Budi\u200b Santoso", "c-2", " (c-2)"},
		{"customer", "\u202eosotnaS iduB", "c-3", " (c-3)"},
		{"customer", "Вudi Santoso", "c-4", " (c-4)"},
		{"customer", "Ani", "c-5", ""}, // one customer, however its name is spelled
		{"customer", "\u200b", "c-6", ""},
		{"customer", "Citra", "c-7", " (c-7)"},
		{"customer", "Cіtra", "c-8", " (c-8)"},
		{"product", "Zakat", "p-1", " (p-1)"},
		{"product", "Ｚａｋａｔ", "p-2", " (p-2)"},
	} {
		if got, ok := n.label(tc.kind, tc.name, tc.id); got != tc.name+tc.want || ok != (tc.want != "") {
			t.Errorf("%s %q (%s): printed %q (%v), want %q", tc.kind, tc.name, tc.id, got, ok, tc.name+tc.want)
		}
	}
}
