package jobs

import (
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/glossary"
)

// TestIndonesianWordsFollowTheGlossary: the job files' and printed summaries' Indonesian
// words, the sentences of their cells (targets, changes, held rows) and the runs' statuses use the
// glossary of docs/reports.md, as the reports do (log tugas, not jurnal).
func TestIndonesianWordsFollowTheGlossary(t *testing.T) {
	terms, err := glossary.Load("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for k, v := range words {
		texts["word "+k] = v[0]
	}
	for s, v := range stateTexts {
		texts["state "+string(s)] = v.id
	}
	for k, v := range phrases {
		texts["phrase "+k] = v[0]
	}
	for k, v := range runStatuses {
		texts["run status "+k] = v[0]
	}
	if len(texts) < 50 {
		t.Fatalf("only %d Indonesian texts", len(texts))
	}
	for where, s := range texts {
		if bad := glossary.Avoided(terms, s); len(bad) > 0 {
			t.Errorf("%s %q: %s", where, s, strings.Join(bad, ", "))
		}
	}
}
