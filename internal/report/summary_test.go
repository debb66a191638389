package report

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// summaries generates every report and opens each workbook's summary sheet.
func summaries(t *testing.T, o Options) map[string]*excelize.File {
	t.Helper()
	files := generateAll(t, o)
	out := map[string]*excelize.File{}
	for _, p := range files {
		if !strings.HasSuffix(p, ".xlsx") {
			continue
		}
		f, err := excelize.OpenFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		out[p] = f
	}
	if len(out) == 0 {
		t.Fatal("no workbook written")
	}
	return out
}

// TestSummaryValuesAlignTop: a summary row is as tall as its longest wrapped
// text, so a value aligned to the bottom (the default) prints a line below its
// label. Every filled cell of every summary is aligned to the top.
func TestSummaryValuesAlignTop(t *testing.T) {
	for path, f := range summaries(t, Options{}) {
		sh := langs["id"].w("summary")
		rows, err := f.GetRows(sh)
		if err != nil {
			t.Fatal(err)
		}
		for r, row := range rows {
			for c, v := range row {
				if v == "" || r < 3 { // title and description
					continue
				}
				cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
				id, err := f.GetCellStyle(sh, cell)
				if err != nil {
					t.Fatal(err)
				}
				st, err := f.GetStyle(id)
				if err != nil {
					t.Fatal(err)
				}
				if st.Alignment == nil || st.Alignment.Vertical != "top" {
					t.Errorf("%s: summary %s %q is not aligned to the top", path, cell, v)
				}
			}
		}
	}
}

// english finds words of English sentences billsync writes (errors, reasons,
// notes); none belongs in a cell of an Indonesian workbook.
var english = regexp.MustCompile(`\b(the|is|are|does|not|has|have|with|of|other|page|stars?|empty|malformed|shared|ambiguous|exactly|exist|kept|reported|balances?|customers?|ledger|none|no|after|before|today|run|was|been|cannot|could)\b`)

// TestIndonesianWorkbooksSayNoEnglish reads every cell of every workbook in
// the default locale, the journal missing (its sentence on the credit
// summary) and an as-of date before the history (a warning on each summary):
// no English sentence billsync writes reaches a cell. Exempt are what the
// service or the person sent (names, e-mails, review texts, response
// payloads, record versions) and the summary's paths and commands.
func TestIndonesianWorkbooksSayNoEnglish(t *testing.T) {
	w := testWorld(t)
	o := Options{DB: w.db, OutDir: t.TempDir(), AsOf: firstSync.AddDate(0, 0, -3), Log: quiet, Formats: []string{"xlsx", "csv"}}
	files, err := Generate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	exemptCols := []string{"Pelanggan", "Produk", "Ulasan", "E-mail", "Respons", "Versi pertama", "Versi disimpan", "Catatan", "fromEmail",
		"toEmail", "Usulan", "Tujuan", "Peristiwa", "Item", "Jalur daftar"}
	exemptRows := []string{"Gudang data", "Jurnal", "Buat ulang", "Kueri", "Parameter"}
	seen := 0
	for _, p := range files {
		if !strings.HasSuffix(p, ".xlsx") {
			continue
		}
		f, err := excelize.OpenFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range f.GetSheetList() {
			rows, err := f.GetRows(sh)
			if err != nil {
				t.Fatal(err)
			}
			for r, row := range rows {
				for c, v := range row {
					switch {
					case r > 0 && len(rows[0]) > c && slices.Contains(exemptCols, rows[0][c]) && sh != langs["id"].w("summary"):
						continue
					case sh == langs["id"].w("summary") && slices.Contains(exemptRows, row[0]):
						continue
					}
					seen++
					if m := english.FindString(v); m != "" {
						t.Errorf("%s, sheet %s row %d: %q (%q)", filepath.Base(p), sh, r+1, v, m)
					}
				}
			}
		}
		f.Close()
	}
	if seen < 1000 {
		t.Fatalf("only %d cells read", seen)
	}
}

// TestCodeListNames: a column of '; '-separated codes shows each code's name.
func TestCodeListNames(t *testing.T) {
	for _, tc := range []struct{ code, id, en string }{
		{"malformed; shared; ambiguous", "format salah; dipakai bersama; fromEmail tidak unik", "malformed; shared; fromEmail not unique"},
		{"empty", "kosong", "empty"},
		{"partial", "Parsial", "Partial"},
		{"x; y", "x; y", "x; y"},
	} {
		if got := langs["id"].codeName(tc.code); got != tc.id {
			t.Errorf("id %q: %q, want %q", tc.code, got, tc.id)
		}
		if got := langs["en"].codeName(tc.code); got != tc.en {
			t.Errorf("en %q: %q, want %q", tc.code, got, tc.en)
		}
	}
}
