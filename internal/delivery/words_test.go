package delivery

import (
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/glossary"
)

// TestIndonesianWordsFollowTheGlossary: a message's Indonesian texts use the words of the
// glossary in docs/reports.md, as the workbooks they carry do (no "gudang data").
func TestIndonesianWordsFollowTheGlossary(t *testing.T) {
	terms, err := glossary.Load("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(words["id"]) < 20 {
		t.Fatalf("only %d Indonesian message texts", len(words["id"]))
	}
	for k, s := range words["id"] {
		if bad := glossary.Avoided(terms, s); len(bad) > 0 {
			t.Errorf("%s %q: %s", k, s, strings.Join(bad, ", "))
		}
	}
}
