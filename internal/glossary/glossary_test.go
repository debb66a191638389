package glossary

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLoadAndAvoided(t *testing.T) {
	terms, err := Load("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(terms, func(t Term) bool { return t.English == "credit ledger (entries)" })
	if i < 0 || !slices.Contains(terms[i].Avoid, "buku besar") {
		t.Fatalf("the glossary has no credit ledger term avoiding 'buku besar': %+v", terms)
	}
	for _, tc := range []struct {
		text string
		bad  int
	}{
		{"Buku besar kredit", 2}, // buku besar and buku besar kredit
		{"Mutasi kredit", 0},
		{"log tugas (Jurnal)", 1},
		{"Kesegarannya", 0}, // whole words only
		{"saldo customerBalance", 1},
	} {
		if got := Avoided(terms, tc.text); len(got) != tc.bad {
			t.Errorf("Avoided(%q) = %q, want %d", tc.text, got, tc.bad)
		}
	}
	dir := t.TempDir()
	for _, bad := range []string{"no table here\n", "| Indonesian | Accounting meaning | English | Not |\n|---|---|---|---|\n| a | b |\n"} {
		p := filepath.Join(dir, "x.md")
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil {
			t.Errorf("Load(%q): no error", bad)
		}
	}
}
