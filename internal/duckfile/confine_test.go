package duckfile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/duckfile"
)

// TestConfineHoldsOnEveryConnection: the confinement is the database's, so a connection the pool
// opens afterwards is confined too, and no statement on any connection undoes it.
func TestConfineHoldsOnEveryConnection(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "in2") // in2: a prefix of in's name, not inside it
	for _, d := range []string{in, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "a.csv"), []byte("x\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "w.duckdb")
	w, err := duckfile.Open(path, duckfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec("CREATE TABLE t (x INT)"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	db, err := duckfile.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	held, err := db.Conn(ctx) // opened before the confinement
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := duckfile.Confine(ctx, db, duckfile.Confinement{Dirs: []string{in}}); err != nil {
		t.Fatal(err)
	}
	conns := []struct {
		name string
		q    func(string) error
	}{
		{"held", func(s string) error { _, err := held.ExecContext(ctx, s); return err }},
		{"pool", func(s string) error { _, err := db.ExecContext(ctx, s); return err }},
	}
	db.SetMaxIdleConns(0) // every pool statement on a connection opened after Confine
	for _, c := range conns {
		if err := c.q("SELECT * FROM read_csv(" + duckfile.QuoteLiteral(filepath.Join(in, "a.csv")) + ")"); err != nil {
			t.Errorf("%s: reading inside the folder: %v", c.name, err)
		}
		if err := c.q("SET TimeZone = 'Asia/Jakarta'"); err != nil {
			t.Errorf("%s: TimeZone stays changeable: %v", c.name, err)
		}
		for _, s := range []string{
			"SELECT * FROM read_csv(" + duckfile.QuoteLiteral(filepath.Join(out, "a.csv")) + ")",
			"SELECT * FROM read_text('/etc/passwd')",
			"COPY (SELECT 1) TO " + duckfile.QuoteLiteral(filepath.Join(out, "b.csv")),
			"SET enable_external_access = true",
			"SET lock_configuration = false",
			"RESET lock_configuration",
			"SET allowed_directories = ['/']",
			"SET allowed_configs = ['enable_external_access']",
			"SET autoinstall_known_extensions = true",
			"SET temp_directory = '/tmp'",
			"INSTALL httpfs",
			"LOAD httpfs",
		} {
			err := c.q(s)
			if err == nil {
				t.Errorf("%s: %s succeeded", c.name, s)
				continue
			}
			if m := err.Error(); !strings.Contains(m, "Permission Error") && !strings.Contains(m, "configuration has been locked") {
				t.Errorf("%s: %s: unclear error %v", c.name, s, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "b.csv")); err == nil {
		t.Error("a COPY outside the folder wrote its file")
	}
}
