package warehouse

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// hashedTables are the tables a list or fan-out merges into by comparing raw_hash (merge/common.sql,
// keys): every declared entity that inserts rows, with its fixture.
type hashedTable struct {
	e     entity.Name
	table string
	file  string // a fixture with one record of the entity
}

var hashedTables = func() []hashedTable {
	var hs []hashedTable
	for _, d := range entity.All() {
		if d.Rule != entity.FillDetail {
			hs = append(hs, hashedTable{d.Name, d.TableName(), d.Fixture})
		}
	}
	return hs
}()

// migration7Tables are the tables migrations 0007 and 0008 add raw_hash to: the entities of
// that day, a fixed list (a table declared later is created with the column).
var migration7Tables = []string{"customers", "products", "payment_requests", "invoices",
	"unpaid_transactions", "reviews", "credit_ledger", "webhook_deliveries"}

// wrongHashes counts the rows of table whose raw_hash is not the one an analyst recomputes from
// raw with docs/warehouse.md's query (the same formula as migrations 0007 and 0008): the loader
// (Go's SHA-256 of the staged bytes) and the SQL must agree, or every row stored before an upgrade
// would look changed, and a row inserted without one would be parsed again every night.
func wrongHashes(t *testing.T, b *Build, table string) int64 {
	t.Helper()
	return queryInt(t, b.DB(), strings.Replace(docRawHashQuery(t), "FROM customers", "FROM "+table, 1))
}

// docRawHashQuery is docs/warehouse.md's SQL example that recomputes raw_hash (for customers).
func docRawHashQuery(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/warehouse.md")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if strings.Contains(m[1], "raw_hash") {
			found = append(found, m[1])
		}
	}
	if len(found) != 1 || !strings.Contains(found[0], "FROM customers") {
		t.Fatalf("docs/warehouse.md: want one SQL example with raw_hash, FROM customers; found %q", found)
	}
	return found[0]
}

// hashText is the decimal text of the UHUGEINT the loader stages for raw, as DuckDB prints it.
func hashText(raw string) string {
	hi, lo := rawHash([]byte(raw))
	return new(big.Int).Or(new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64), new(big.Int).SetUint64(lo)).String()
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
			if res := load(t, b, c.e, r2, t0.Add(time.Hour), false, items...); res != (syncdata.MergeResult{Unchanged: int64(len(items))}) {
				t.Errorf("identical merge %+v, want %d unchanged", res, len(items))
			}

			r3 := startRun(t, b, "acct")
			changed := append([]string{changedCopy(items[0])}, items[1:]...)
			res := load(t, b, c.e, r3, t0.Add(2*time.Hour), false, changed...)
			if res != (syncdata.MergeResult{Updated: 1, Unchanged: int64(len(items) - 1)}) {
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

// TestRawHashMigration takes a warehouse back to an earlier shape, migrates it, and checks the
// stored hashes are the loader's, bit for bit: the same records then merge as unchanged. From 0007
// (raw_hash a BLOB, migration 0008 converts it) and from before 0007 (no raw_hash: 0007 computes
// it in SQL, 0008 converts it).
func TestRawHashMigration(t *testing.T) {
	ctx := context.Background()
	migration7, err := sqlFS.ReadFile("migrations/0007_raw_hash.sql")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		undo     []int64 // schema_migrations versions the warehouse is taken back before
		wantType string  // raw_hash's type before migrate
		recreate bool    // apply 0007 again after dropping raw_hash
	}{
		{name: "from 0007", undo: []int64{8}, wantType: "BLOB", recreate: true},
		{name: "before 0007", undo: []int64{7, 8}, wantType: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			migrated := slices.DeleteFunc(slices.Clone(hashedTables), func(h hashedTable) bool {
				return !slices.Contains(migration7Tables, h.table)
			})
			b := startBuild(t, newPath(t))
			r1 := startRun(t, b, "acct")
			want := map[string]int{}
			for _, c := range migrated {
				items := withSecond(t, fixtureItems(t, c.file))
				load(t, b, c.e, r1, t0, false, items...)
				want[c.table] = len(items)
			}
			db := b.DB()
			for _, c := range migrated {
				if _, err := db.ExecContext(ctx, "ALTER TABLE "+c.table+" DROP COLUMN raw_hash"); err != nil {
					t.Fatal(err)
				}
			}
			if tc.recreate {
				if _, err := db.ExecContext(ctx, string(migration7)); err != nil {
					t.Fatalf("migration 0007: %v", err)
				}
			}
			for _, v := range tc.undo {
				if _, err := db.ExecContext(ctx, "DELETE FROM schema_migrations WHERE version = ?", v); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range migrated {
				if got := rawHashType(t, b, c.table); got != tc.wantType {
					t.Fatalf("%s: raw_hash type %q before the migration, want %q", c.table, got, tc.wantType)
				}
			}
			if err := migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			for _, c := range migrated {
				if got := rawHashType(t, b, c.table); got != "UHUGEINT" {
					t.Errorf("%s: raw_hash type %q after the migration", c.table, got)
				}
				if n := wrongHashes(t, b, c.table); n != 0 {
					t.Errorf("%s: %d rows with a wrong raw_hash after the migration", c.table, n)
				}
				rows, err := db.QueryContext(ctx, "SELECT raw::VARCHAR, raw_hash::VARCHAR FROM "+c.table)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var raw, h string
					if err := rows.Scan(&raw, &h); err != nil {
						t.Fatal(err)
					}
					if h != hashText(raw) {
						t.Errorf("%s: migrated raw_hash %s, the loader's %s", c.table, h, hashText(raw))
					}
				}
				rows.Close()
			}
			r2 := startRun(t, b, "acct")
			for _, c := range migrated {
				res := load(t, b, c.e, r2, t0.Add(time.Hour), false, withSecond(t, fixtureItems(t, c.file))...)
				if res != (syncdata.MergeResult{Unchanged: int64(want[c.table])}) {
					t.Errorf("%s: merge after the migration %+v, want %d unchanged", c.table, res, want[c.table])
				}
			}
		})
	}
}

// rawHashType is the type of table's raw_hash column, "" when it has none.
func rawHashType(t *testing.T, b *Build, table string) string {
	t.Helper()
	var typ string
	err := b.DB().QueryRow(`SELECT coalesce(max(data_type), '') FROM information_schema.columns
		WHERE table_name = ? AND column_name = 'raw_hash'`, table).Scan(&typ)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

// TestRawHashBits pins the value's layout with SHA-256's own test vector: the first 16 bytes of
// sha256("abc") read big-endian, in Go and in the SQL an analyst runs; a byte order swapped in
// either would make every stored row look changed after an upgrade.
func TestRawHashBits(t *testing.T) {
	hi, lo := rawHash([]byte("abc"))
	if got := fmt.Sprintf("%016x%016x", hi, lo); got != "ba7816bf8f01cfea414140de5dae2223" {
		t.Errorf("rawHash(abc) = %s", got)
	}
	b := startBuild(t, newPath(t))
	var got string
	if err := b.DB().QueryRow(`SELECT (unhex(left(sha256('abc'), 32))::BIT::UHUGEINT)::VARCHAR`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := hashText("abc"); got != want {
		t.Errorf("SQL %s, Go %s", got, want)
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
	rows, err := b.DB().Query(`SELECT table_name, data_type FROM information_schema.columns WHERE column_name = 'raw_hash' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		got[name] = true
		if typ != "UHUGEINT" {
			t.Errorf("%s.raw_hash is %s, want UHUGEINT", name, typ)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("tables with raw_hash %v, entity tables %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
}
