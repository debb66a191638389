package warehouse

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// mergeFS copies the embedded merge SQL into a map so a test can break one file.
func mergeFS(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(sqlFS, "merge", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sqlFS, path)
		m[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func edit(t *testing.T, m fstest.MapFS, file, old, new string) {
	t.Helper()
	s := string(m[file].Data)
	if !strings.Contains(s, old) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	m[file] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1))}
}

func TestEveryEntityResolvesEveryStep(t *testing.T) {
	defs, err := loadEntityDefs(sqlFS)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != len(newEntityDefs()) {
		t.Fatalf("%d entities loaded, want %d", len(defs), len(newEntityDefs()))
	}
	for e, d := range defs {
		for _, step := range d.steps() {
			if d.optOut[step] {
				continue
			}
			if strings.TrimSpace(stripComments(d.sql[step])) == "" {
				t.Errorf("%s: step %s resolved to no statement", e, step)
			}
		}
	}
}

// A renamed, dropped or emptied section must fail the load: before the contract, each of these
// left every test green while a table's change history or derived rows stopped being written.
func TestMergeSQLContractViolationsFailTheLoad(t *testing.T) {
	cases := []struct {
		name, file, old, new, want string
	}{
		{"renamed entity section", "merge/unpaid_transactions.sql", "-- name: changes", "-- name: change",
			`merge/unpaid_transactions.sql: unknown section(s) change`},
		{"dropped entity section", "merge/reviews.sql", "-- name: changes", "-- removed",
			`reviews: step "changes" has no section`},
		{"renamed common section", "merge/common.sql", "-- name: seen_in_run", "-- name: seen_in_runs",
			`merge/common.sql: unknown section(s) seen_in_runs`},
		{"dropped common section", "merge/common.sql", "-- name: deleted", "-- name: lifecycle_deleted",
			`unknown section(s) lifecycle_deleted`},
		{"empty section without opt-out", "merge/product_details.sql",
			"-- opt-out: owner and quantity changes are not tracked in record_changes", "",
			`product_details: section "changes" is empty; write ` + "`-- opt-out: <why>`"},
		{"renamed derived section", "merge/derived.sql", "-- name: invoice_transactions_first", "-- name: invoice_transaction_first",
			`merge/derived.sql: unknown section(s) invoice_transaction_first`},
		{"derived temp table renamed", "merge/derived.sql", "TEMP TABLE incoming_variants AS", "TEMP TABLE incoming_variant AS",
			`section product_variants_incoming does not create temp table incoming_variants`},
		{"unknown placeholder", "merge/common.sql", "INSERT INTO __TABLE__ BY NAME", "INSERT INTO __TABEL__ BY NAME",
			`keeps placeholder __TABEL__`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mergeFS(t)
			edit(t, m, c.file, c.old, c.new)
			_, err := loadEntityDefs(m)
			if err == nil {
				t.Fatal("loaded without error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\ndoes not contain %q", err, c.want)
			}
		})
	}
}
