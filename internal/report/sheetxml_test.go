package report

import (
	"archive/zip"
	"bytes"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/report/sheetxml"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/xuri/excelize/v2"
)

// excelizeValue is what the report handed excelize's SetRow for a query value
// before it wrote the rows itself: the reference the cells written by sheetxml must match.
func excelizeValue(x *xlsxSheet, v any, c column) any {
	switch t := v.(type) {
	case nil:
		if c.empty != "" {
			return c.empty
		}
	case value.Decimal:
		return t.Float64()
	case time.Time:
		if c.kind == value.KindDate {
			return serialDay(t)
		}
		return serialTime(t, x.loc)
	case string:
		t = x.displayText(t, &c) // a code by its name, invisible characters by their code
		if len(t) > maxCellText-1 && utf8.RuneCountInString(t) > maxCellText-1 {
			t = string([]rune(t)[:maxCellText-1])
		}
		return t
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil
		}
	}
	return v
}

type testDecimal struct{ s string }

func (d testDecimal) Float64() float64 { return 1234.5 }
func (d testDecimal) String() string   { return d.s }

// TestSheetRowsMatchExcelize writes awkward values as the report writes a row (xlsxSheet.put,
// sheetxml.Spliced) and through excelize's StreamWriter.SetRow, and wants the same row XML:
// text that needs escaping, kept spaces, _xHHHH_ sequences, invalid UTF-8, text over Excel's
// cell limit, NULLs, codes, dates and numbers.
func TestSheetRowsMatchExcelize(t *testing.T) {
	jkt, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Fatal(err)
	}
	l := langs["id"]
	cols := []column{
		{name: "a", format: "text"},
		{name: "b", format: "money", kind: value.KindInt},
		{name: "c", format: "date", kind: value.KindDate},
		{name: "d", format: "datetime", kind: value.KindTime},
		{name: "e", format: "text", codes: true, names: map[string]string{}},
		{name: "f", format: "text", empty: "(none)"},
		{name: "g", format: "decimal2", kind: value.KindFloat},
		{name: "h", format: "text", kind: value.KindBool},
	}
	long := strings.Repeat("é😀", 20000)
	texts := []string{
		"plain", "", "Ñoño & <Sons> \"quoted\" 'single'", " leading", "trailing\t", "line\nbreak\r\n",
		"=1+1", "+62 812-3456", "-minus", "_x0041_ literal", "a_x005F_x0041_b", "_x005F_", "_xZZZZ_ no", "tab\there",
		"_x005F_x005F_", "_xD800_ surrogate", "_x005F_xD800_", "_x005f_ lower", "__x0041__", "_x0041_x0042_",
		"_x0041", "x0041_", "_x005F_x00", "_x_x0041_", "end _x0041_",
		"\x01control\x1f", "bad \xff utf8", "ok\u2028sep", "\uFFFE", long, strings.Repeat("a", 40000),
	}
	var rows [][]any
	for i, s := range texts {
		rows = append(rows, []any{s, int64(i - 3), time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC),
			time.Date(2026, 6, 30, 17, 4, 5, 123456789, time.UTC), "paid", nil, float64(i) / 3, i%2 == 0})
	}
	rows = append(rows,
		[]any{nil, nil, nil, nil, nil, "x", math.NaN(), nil},
		[]any{"x", testDecimal{"1234.50"}, nil, nil, "unknown_code", nil, math.Inf(-1), true},
		[]any{"x", int64(math.MinInt64), nil, nil, "", nil, 1e21, false},
		[]any{"x", 1.5e-7, nil, nil, "PAID", nil, math.Copysign(0, -1), "fallback"},
	)

	// ours: the rows as the report writes them, spliced after a header row at save
	f := excelize.NewFile()
	defer f.Close()
	st, err := newStyles(f, "IDR", l)
	if err != nil {
		t.Fatal(err)
	}
	x := newXLSXSheet(f, st, jkt, l, "S", cols, "")
	for i, c := range cols {
		x.cells[i].StyleID = st.Body[c.format]
		if c.format == "text" {
			x.cells[i].StyleID = st.Text
		}
	}
	x.cells[5].StyleID = 0 // no style attribute
	if x.rows, err = sheetxml.New(sheetxml.Spliced, len(cols)); err != nil {
		t.Fatal(err)
	}
	defer x.rows.Close()
	for _, r := range rows {
		if err := x.put(r); err != nil {
			t.Fatal(err)
		}
	}
	// the reference: excelize's StreamWriter given what the report handed it
	f2 := excelize.NewFile()
	defer f2.Close()
	if _, err := newStyles(f2, "IDR", l); err != nil {
		t.Fatal(err)
	}
	cells := make([]excelize.Cell, len(cols))
	refRow := make([]any, len(cols))
	var got, want []byte
	for k, file := range []*excelize.File{f, f2} {
		if _, err := file.NewSheet("S"); err != nil {
			t.Fatal(err)
		}
		sw, err := file.NewStreamWriter("S")
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.SetRow("A1", []any{"header"}); err != nil {
			t.Fatal(err)
		}
		if k == 1 {
			for n, r := range rows {
				for i, v := range r {
					cells[i] = excelize.Cell{StyleID: x.cells[i].StyleID, Value: excelizeValue(x, v, cols[i])}
					if t, ok := cells[i].Value.(string); ok && v != nil && cellsafe.StartsLikeFormula(t) {
						cells[i].StyleID = st.Quoted[cells[i].StyleID] // the quote prefix marks it, not an apostrophe
					}
					if v == nil && cols[i].empty != "" && cols[i].format != "text" {
						cells[i].StyleID = st.Reason
					}
					refRow[i] = &cells[i]
				}
				cell, _ := excelize.CoordinatesToCellName(1, n+2)
				if err := sw.SetRow(cell, refRow); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := sw.Flush(); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		file.SetZipWriter(func(io.Writer) excelize.ZipWriter {
			if k == 1 {
				return sheetxml.NewZipWriter(&buf, nil)
			}
			return sheetxml.NewZipWriter(&buf, map[string]*sheetxml.Rows{"xl/worksheets/sheet2.xml": x.rows})
		})
		if _, err := file.WriteTo(io.Discard); err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			want = rowsXML(t, buf.Bytes())
		} else {
			want, got = rowsXML(t, buf.Bytes()), want
		}
	}
	gotRows, wantRows := rowRe.FindAll(got, -1), rowRe.FindAll(want, -1)
	if len(gotRows) != len(rows)+1 || len(wantRows) != len(rows)+1 {
		t.Fatalf("rows: ours %d, excelize %d, want %d", len(gotRows), len(wantRows), len(rows)+1)
	}
	gotRows, wantRows = gotRows[1:], wantRows[1:] // the header
	// excelize loses these texts (TestEscapeLikeTextReadsBack shows ours read back)
	lost := map[string]bool{"_xD800_ surrogate": true, "_x005F_xD800_": true, "_x0041_x0042_": true}
	for i := range rows {
		if s, _ := rows[i][0].(string); lost[s] {
			if bytes.Equal(gotRows[i], wantRows[i]) {
				t.Errorf("row %d (%q): written as excelize does, which loses it", i+2, s)
			}
			continue
		}
		if !bytes.Equal(gotRows[i], wantRows[i]) {
			t.Errorf("row %d (%.40q):\n got %.600s\nwant %.600s", i+2, rows[i][0], gotRows[i], wantRows[i])
		}
	}
}

var rowRe = regexp.MustCompile(`(?s)<row r="\d+">.*?</row>`)

// rowsXML is the sheetData of the workbook's streamed sheet.
func rowsXML(t *testing.T, xlsx []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(xlsx), int64(len(xlsx)))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		if zf.Name != "xl/worksheets/sheet2.xml" {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatal("no sheet2.xml")
	return nil
}

// TestReasonAlignsWithNumbers: a number column's NULL shown as its reason is
// aligned right with the numbers (left, it ran into the column before it:
// "4,0%belum teramati"); a text column's keeps the text style.
func TestReasonAlignsWithNumbers(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	l := langs["id"]
	st, err := newStyles(f, "IDR", l)
	if err != nil {
		t.Fatal(err)
	}
	cols := []column{{name: "days", format: "decimal1", kind: value.KindFloat, empty: "belum teramati"},
		{name: "note", format: "text", empty: "tidak ada"}}
	x := newXLSXSheet(f, st, time.UTC, l, "S", cols, "")
	x.cells[0].StyleID, x.cells[1].StyleID = st.Body["decimal1"], st.Text
	got := []sheetxml.Cell{x.cell(nil, &x.cols[0], x.cells[0].StyleID), x.cell(nil, &x.cols[1], x.cells[1].StyleID)}
	want := []sheetxml.Cell{{Style: st.Reason, Type: sheetxml.String, Str: "belum teramati"},
		{Style: st.Text, Type: sheetxml.String, Str: "tidak ada"}}
	if !slices.Equal(got, want) {
		t.Errorf("cells %+v\nwant %+v", got, want)
	}
}

// TestWorkbooksSplicedAsStream renders every report's workbook with its body rows spliced in
// (sheetxml.Spliced, what the reports do) and handed to excelize's StreamWriter
// (sheetxml.Stream), in Indonesian and English, and wants the same bytes in every part: the
// sheets, their styles, the tables, the charts. Three things differ between any two renderings
// and are left out: the document's properties and the summary's "Generated" value (the time
// it was made), and the order of [Content_Types].xml's entries (excelize writes them from a map).
func TestWorkbooksSplicedAsStream(t *testing.T) {
	for _, locale := range []string{"id", "en"} {
		l := langs[locale]
		render := func(mode sheetxml.Mode) map[string]map[string][]byte {
			sheetRowsMode = mode
			defer func() { sheetRowsMode = sheetxml.Spliced }()
			out := map[string]map[string][]byte{}
			for _, f := range generateAll(t, Options{Report: config.Report{Locale: locale}, Formats: []string{"xlsx"}}) {
				parts := xlsxParts(t, f, "")
				delete(parts, "docProps/core.xml")
				parts["[Content_Types].xml"] = sortedEntries(parts["[Content_Types].xml"])
				parts["xl/sharedStrings.xml"] = withoutGenerated(t, parts["xl/sharedStrings.xml"], l.w("generated"))
				out[filepath.Base(f)] = parts
			}
			return out
		}
		spliced, stream := render(sheetxml.Spliced), render(sheetxml.Stream)
		if len(spliced) == 0 || len(spliced) != len(stream) {
			t.Fatalf("%s: %d workbooks spliced, %d streamed", locale, len(spliced), len(stream))
		}
		sheets := 0
		for name, parts := range spliced {
			if len(parts) != len(stream[name]) {
				t.Errorf("%s %s: %d parts spliced, %d streamed", locale, name, len(parts), len(stream[name]))
			}
			for part, b := range parts {
				if strings.HasPrefix(part, "xl/worksheets/sheet") {
					sheets++
				}
				if !bytes.Equal(b, stream[name][part]) {
					t.Errorf("%s %s %s: spliced and streamed differ:\n%.300s\n%.300s", locale, name, part, b, stream[name][part])
				}
			}
		}
		if sheets < 2*len(spliced) {
			t.Errorf("%s: %d sheets in %d workbooks", locale, sheets, len(spliced))
		}
	}
}

var contentTypeRe = regexp.MustCompile(`<(?:Default|Override) [^>]*>`)

// sortedEntries is [Content_Types].xml's entries, sorted.
func sortedEntries(b []byte) []byte {
	e := contentTypeRe.FindAll(b, -1)
	slices.SortFunc(e, bytes.Compare)
	return bytes.Join(e, []byte("\n"))
}

var sharedStringRe = regexp.MustCompile(`(?s)<si>.*?</si>`)

// withoutGenerated is the shared strings with the one after label, the summary's time it was
// made, left out.
func withoutGenerated(t *testing.T, b []byte, label string) []byte {
	t.Helper()
	si := sharedStringRe.FindAll(b, -1)
	i := slices.IndexFunc(si, func(s []byte) bool { return string(s) == "<si><t>"+label+"</t></si>" })
	if i < 0 || i+1 >= len(si) {
		t.Fatalf("no %q among the shared strings", label)
	}
	return bytes.Join(slices.Delete(si, i+1, i+2), nil)
}
