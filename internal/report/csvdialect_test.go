package report

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/config"
	"github.com/xuri/excelize/v2"
)

// TestCSVDialectsImportAsNumbers opens the reports' CSVs as a spreadsheet does: LibreOffice's
// CSV import with "detect special numbers" (what Excel does on a double click), under an English
// and an Indonesian locale. Every number, percentage and date-time column must arrive as a number
// (a date-time as a date serial) when the dialect matches the locale: rfc under English, id under
// Indonesian. Under Indonesian settings the rfc CSV does not (4.33 and 1.0 import as text, or as
// other numbers): that is why the id dialect exists.
func TestCSVDialectsImportAsNumbers(t *testing.T) {
	if _, err := exec.LookPath("soffice"); err != nil {
		t.Fatalf("soffice is missing: install Debian's libreoffice-calc (.ci/run does): %v", err)
	}
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		dialect string
		lcid    string // the import's language: 1033 English (US), 1057 Indonesian
		sep     byte
		formats []string // the formats whose every value must import as a number
	}{
		// rfc writes times as RFC 3339 for programs: a spreadsheet keeps them as text.
		{"rfc", "1033", ',', []string{"int", "money", "percent", "decimal1"}},
		{"id", "1057", ';', []string{"int", "money", "percent", "decimal1", "datetime"}},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			out := filepath.Join(dir, tc.dialect)
			files := generateAll(t, Options{Report: config.Report{ReportsOut: out, CSVDialect: tc.dialect}, Formats: []string{"csv"}, Names: []string{"collections", "data-quality"}})
			lo := filepath.Join(dir, "lo-"+tc.dialect)
			// separator, quote ("), UTF-8 (76), first line 1, no column formats, language,
			// quoted fields as text off, detect special numbers on
			filter := "CSV:" + strconv.Itoa(int(tc.sep)) + ",34,76,1,," + tc.lcid + ",false,true"
			args := append([]string{"-env:UserInstallation=file://" + filepath.Join(dir, "lo-profile"), "--headless",
				"--infilter=" + filter, "--convert-to", "xlsx", "--outdir", lo}, files...)
			if b, err := exec.Command("soffice", args...).CombinedOutput(); err != nil {
				t.Fatalf("soffice: %v\n%s", err, b)
			}
			checked := map[string]int{}
			for _, d := range defs {
				if d.Name != "collections" && d.Name != "data-quality" {
					continue
				}
				for _, sh := range d.Sheets {
					numeric := map[string]string{} // title → format
					for _, c := range sh.Columns {
						if slices.Contains(tc.formats, c.Format) {
							numeric[c.Title.In(config.DefaultLocale)] = c.Format
						}
					}
					csvFile := ""
					for _, f := range files {
						if strings.HasPrefix(filepath.Base(f), d.Name+"_") && strings.HasSuffix(f, "_"+slug(sh.Name)+".csv") {
							csvFile = f
						}
					}
					if csvFile == "" {
						t.Fatalf("%s: no CSV for sheet %s among %v", d.Name, sh.Name, files)
					}
					xlsx := filepath.Join(lo, strings.TrimSuffix(filepath.Base(csvFile), ".csv")+".xlsx")
					f, err := excelize.OpenFile(xlsx)
					if err != nil {
						t.Fatalf("%s: %v", xlsx, err)
					}
					rows, err := f.GetRows(f.GetSheetName(0), excelize.Options{RawCellValue: true})
					if err != nil || len(rows) == 0 {
						t.Fatalf("%s: %v", xlsx, err)
					}
					for ci, title := range rows[0] {
						format, ok := numeric[strings.TrimPrefix(title, "\ufeff")]
						if !ok {
							continue
						}
						for ri := 1; ri < len(rows); ri++ {
							if ci >= len(rows[ri]) || rows[ri][ci] == "" {
								continue
							}
							cell, _ := excelize.CoordinatesToCellName(ci+1, ri+1)
							typ, _ := f.GetCellType(f.GetSheetName(0), cell)
							if _, err := strconv.ParseFloat(rows[ri][ci], 64); err != nil || typ == excelize.CellTypeSharedString ||
								typ == excelize.CellTypeInlineString {
								t.Errorf("%s %s %s (%s): %q imported as text", filepath.Base(csvFile), cell, title, format, rows[ri][ci])
								continue
							}
							checked[format]++
						}
					}
					f.Close()
				}
			}
			for _, format := range tc.formats {
				if checked[format] == 0 {
					t.Errorf("no %s value was checked: %v", format, checked)
				}
			}
		})
	}
}
