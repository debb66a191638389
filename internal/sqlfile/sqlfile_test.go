package sqlfile

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"testing/fstest"

	_ "github.com/duckdb/duckdb-go/v2"
)

func TestSections(t *testing.T) {
	fsys := fstest.MapFS{
		"a.sql":   {Data: []byte("-- header comment\n\n-- name: one\nSELECT 1;\n\n-- name: two\nSELECT 2\nFROM t;\n")},
		"dup.sql": {Data: []byte("-- name: x\nSELECT 1;\n-- name: x\nSELECT 2;\n")},
	}
	got, err := Sections(fsys, "a.sql")
	if err != nil {
		t.Fatal(err)
	}
	if got["one"] != "SELECT 1;" || got["two"] != "SELECT 2\nFROM t;" || len(got) != 2 {
		t.Fatalf("sections = %q", got)
	}
	if _, err := Sections(fsys, "dup.sql"); err == nil || !strings.Contains(err.Error(), `"x" defined twice`) {
		t.Fatalf("duplicate section: %v", err)
	}
}

func TestMigrate(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0001_init.sql":   {Data: []byte("CREATE TABLE t (x INT);")},
		"m/0002_rows.sql":   {Data: []byte("INSERT INTO t VALUES (1), (2);")},
		"bad/01_short.sql":  {Data: []byte("SELECT 1;")},
		"twice/0001_a.sql":  {Data: []byte("SELECT 1;")},
		"twice/0001_b.sql":  {Data: []byte("SELECT 1;")},
		"broken/0001_x.sql": {Data: []byte("CREATE TABLE u (x INT); INSERT INTO nowhere VALUES (1);")},
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for range 2 { // the second time applies nothing again
		if err := Migrate(ctx, db, fsys, "m"); err != nil {
			t.Fatal(err)
		}
	}
	var rows, applied int
	db.QueryRow("SELECT count(*) FROM t").Scan(&rows)
	db.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&applied)
	if rows != 2 || applied != 2 {
		t.Fatalf("t has %d rows and %d migrations are recorded, want 2 and 2", rows, applied)
	}
	for dir, want := range map[string]string{
		"bad":    "name is not NNNN_name.sql",
		"twice":  "used twice",
		"broken": "migration 0001_x",
	} {
		fresh, err := sql.Open("duckdb", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := Migrate(ctx, fresh, fsys, dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", dir, err, want)
		}
		if dir == "broken" {
			// A failed migration leaves nothing behind: it ran in a transaction.
			if err := fresh.QueryRow("SELECT count(*) FROM u").Scan(&rows); err == nil {
				t.Error("table u of the failed migration exists")
			}
		}
		fresh.Close()
	}
}

func TestLoadChecksDeclaredNames(t *testing.T) {
	fsys := fstest.MapFS{"a.sql": {Data: []byte("-- name: one\nSELECT 1;\n-- name: two\nSELECT 2;\n")}}
	s, err := Load(fsys, "a.sql", "one", "two")
	if err != nil {
		t.Fatal(err)
	}
	if s.Get("two") != "SELECT 2;" {
		t.Fatalf("two = %q", s.Get("two"))
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"one"}, "a.sql: section(s) two declared by no caller"},
		{[]string{"one", "two", "three"}, "a.sql: no section for three"},
		{[]string{"one", "tw"}, "a.sql: no section for tw; section(s) two declared by no caller"},
	} {
		if _, err := Load(fsys, "a.sql", c.names...); err == nil || err.Error() != c.want {
			t.Errorf("Load(%v) = %v, want %q", c.names, err, c.want)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `statement "three" was not declared`) {
			t.Fatalf("Get of an undeclared name: recover() = %v", r)
		}
	}()
	s.Get("three")
}
