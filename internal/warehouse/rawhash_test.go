package warehouse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// hashedTables are the tables a list or fan-out merges into by comparing raw_hash (merge/common.sql,
// keys); migration 0007 names the same eight.
type hashedTable struct {
	e     Entity
	table string
	file  string // a fixture with one record of the entity
}

var hashedTables = []hashedTable{
	{Customers, "customers", "Customers__customer-list-response.json"},
	{Products, "products", "Products__product-list-response.json"},
	{PaymentRequests, "payment_requests", "PaymentRequests__payment-request-list-response.json"},
	{Invoices, "invoices", "Invoices__invoice-list-response.json"},
	{UnpaidTransactions, "unpaid_transactions", "Transactions__unpaid-list-response.json"},
	{Reviews, "reviews", "Reviews__review-list-response.json"},
	{CreditLedger, "credit_ledger", "CreditMembership__credit-paginate-history-response.json"},
	{WebhookDeliveries, "webhook_deliveries", "Webhooks__webhook-history-list-response.json"},
}

// wrongHashes counts the rows of table whose raw_hash is not the one migration 0007 computes from
// raw: the loader (Go's SHA-256 of the staged bytes) and the migration must agree, or every row
// stored before an upgrade would look changed, and a row inserted without one would be parsed
// again every night.
func wrongHashes(t *testing.T, b *Build, table string) int64 {
	t.Helper()
	return queryInt(t, b.DB(), fmt.Sprintf(`SELECT count(*) FROM %s
		WHERE raw_hash IS DISTINCT FROM unhex(left(sha256(raw::VARCHAR), 32))`, table))
}

// withSecond adds a copy of the first item under another id, so a merge holds an identical record
// beside a changed one.
func withSecond(t *testing.T, items []string) []string {
	t.Helper()
	var rec struct{ ID string }
	if err := json.Unmarshal([]byte(items[0]), &rec); err != nil || rec.ID == "" {
		t.Fatalf("fixture item without an id (%v): %s", err, items[0])
	}
	return append(items, strings.Replace(items[0], rec.ID, rec.ID+"-second", 1))
}

// changedCopy returns record with one more field, so its bytes differ and its typed columns do not.
func changedCopy(record string) string {
	i := strings.LastIndexByte(record, '}')
	return record[:i] + `,"billsyncTest":1}`
}

// TestRawHashTellsIdenticalRecords runs every hashed entity through a first merge, an identical one
// and one where a record's bytes changed: each row's raw_hash is the SHA-256 prefix of its raw, on
// every path that writes rows, and a merge tells the identical records from the changed one by it.
func TestRawHashTellsIdenticalRecords(t *testing.T) {
	for _, c := range hashedTables {
		t.Run(c.table, func(t *testing.T) {
			b := startBuild(t, newPath(t))
			items := withSecond(t, fixtureItems(t, c.file))
			r1 := startRun(t, b, "acct")
			if res := load(t, b, c.e, r1, t0, false, items...); res.Inserted != int64(len(items)) {
				t.Fatalf("first merge %+v of %d", res, len(items))
			}
			if n := wrongHashes(t, b, c.table); n != 0 {
				t.Errorf("after the first merge %d rows with a wrong raw_hash", n)
			}

			r2 := startRun(t, b, "acct")
			if res := load(t, b, c.e, r2, t0.Add(time.Hour), false, items...); res != (MergeResult{Unchanged: int64(len(items))}) {
				t.Errorf("identical merge %+v, want %d unchanged", res, len(items))
			}

			r3 := startRun(t, b, "acct")
			changed := append([]string{changedCopy(items[0])}, items[1:]...)
			res := load(t, b, c.e, r3, t0.Add(2*time.Hour), false, changed...)
			if res != (MergeResult{Updated: 1, Unchanged: int64(len(items) - 1)}) {
				t.Errorf("merge with one changed record %+v", res)
			}
			if n := wrongHashes(t, b, c.table); n != 0 {
				t.Errorf("after the changed merge %d rows with a wrong raw_hash", n)
			}
			if n := queryInt(t, b.DB(), fmt.Sprintf(`SELECT count(*) FROM %s WHERE raw::VARCHAR LIKE '%%billsyncTest%%'`, c.table)); n != 1 {
				t.Errorf("%d rows hold the changed record's raw", n)
			}
		})
	}
}

// TestRawHashMigration takes a warehouse back to its shape before migration 0007 (no raw_hash),
// migrates it, and checks the hashes it computed are the loader's: the same records then merge as
// unchanged.
func TestRawHashMigration(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	r1 := startRun(t, b, "acct")
	want := map[string]int{}
	for _, c := range hashedTables {
		items := withSecond(t, fixtureItems(t, c.file))
		load(t, b, c.e, r1, t0, false, items...)
		want[c.table] = len(items)
	}
	db := b.DB()
	for _, c := range hashedTables {
		if _, err := db.ExecContext(ctx, "ALTER TABLE "+c.table+" DROP COLUMN raw_hash"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM schema_migrations WHERE version = 7"); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, c := range hashedTables {
		if n := wrongHashes(t, b, c.table); n != 0 {
			t.Errorf("%s: %d rows with a wrong raw_hash after the migration", c.table, n)
		}
		rows, err := db.QueryContext(ctx, "SELECT raw::VARCHAR, raw_hash FROM "+c.table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var raw string
			var h []byte
			if err := rows.Scan(&raw, &h); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(h, rawHash([]byte(raw))) {
				t.Errorf("%s: migrated raw_hash %x, the loader's %x", c.table, h, rawHash([]byte(raw)))
			}
		}
		rows.Close()
	}
	r2 := startRun(t, b, "acct")
	for _, c := range hashedTables {
		res := load(t, b, c.e, r2, t0.Add(time.Hour), false, withSecond(t, fixtureItems(t, c.file))...)
		if res != (MergeResult{Unchanged: int64(want[c.table])}) {
			t.Errorf("%s: merge after the migration %+v, want %d unchanged", c.table, res, want[c.table])
		}
	}
}

// TestRawHashCoversEveryEntity keeps the three lists in step: every entity that inserts rows is
// in hashedTables (so the tests above cover it), and the tables with a raw_hash column after the
// migrations are exactly those. An entity added without the column would merge every record as
// changed, every night, without failing anything else.
func TestRawHashCoversEveryEntity(t *testing.T) {
	want := map[string]bool{}
	for e, def := range entityDefs {
		if def.detail {
			continue
		}
		want[def.table] = true
		if !slices.ContainsFunc(hashedTables, func(h hashedTable) bool { return h.e == e && h.table == def.table }) {
			t.Errorf("entity %s (table %s) is not in hashedTables", e, def.table)
		}
	}
	b := startBuild(t, newPath(t))
	rows, err := b.DB().Query(`SELECT table_name FROM information_schema.columns WHERE column_name = 'raw_hash' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		got[name] = true
	}
	if !maps.Equal(got, want) {
		t.Errorf("tables with raw_hash %v, entity tables %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
}
