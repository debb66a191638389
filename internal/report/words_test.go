package report

import (
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/glossary"
)

// indonesianTexts are every Indonesian string a workbook or CSV can print that is not data:
// the definitions' titles, descriptions, notes, sheet tabs, column titles and empty words,
// check and exception labels, and the summary's words and code names.
func indonesianTexts(t *testing.T) map[string]string {
	t.Helper()
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	add := func(where string, x Text) {
		if s := x.In("id"); s != "" {
			out[where] = s
		}
	}
	for _, d := range defs {
		add(d.Name+" title", d.Title)
		add(d.Name+" description", d.Description)
		for i, n := range d.Notes {
			add(d.Name+" note "+string(rune('1'+i)), n)
		}
		if d.Chart != nil {
			add(d.Name+" chart", d.Chart.Title)
		}
		for _, sh := range d.Sheets {
			w := d.Name + "/" + sh.Name
			add(w+" tab", sh.Title)
			add(w+" totals", sh.Totals)
			add(w+" count", sh.Count)
			if sh.Check != nil {
				add(w+" check", sh.Check.Label)
			}
			if sh.Exceptions != nil {
				add(w+" exceptions", sh.Exceptions.Label)
			}
			for _, c := range sh.Columns {
				add(w+"."+c.Name, c.Title)
				add(w+"."+c.Name+" empty", c.Empty)
				add(w+"."+c.Name+" summary", c.Summary)
			}
		}
	}
	for k, v := range langs["id"].words {
		out["summary word "+k] = v
	}
	for k, v := range codeNames {
		out["code "+k] = v[0]
	}
	return out
}

// TestIndonesianWordsFollowTheGlossary: no Indonesian text of a report uses a word the
// glossary of docs/reports.md replaced (Buku besar for a customer's credit history, Jurnal
// for the job log, Gudang data, API field names).
func TestIndonesianWordsFollowTheGlossary(t *testing.T) {
	terms, err := glossary.Load("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	texts := indonesianTexts(t)
	if len(texts) < 300 {
		t.Fatalf("only %d Indonesian texts found: the walk misses definitions", len(texts))
	}
	for where, s := range texts {
		if bad := glossary.Avoided(terms, s); len(bad) > 0 {
			t.Errorf("%s %q: %s", where, s, strings.Join(bad, ", "))
		}
	}
}
