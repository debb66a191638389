package report

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/xuri/excelize/v2"
)

// excelizeValue is what the report handed excelize's SetRow for a query value
// before it wrote the rows itself: the reference sheetRows must match.
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

// TestSheetRowsMatchExcelize writes awkward values through sheetRows and
// through excelize's StreamWriter.SetRow, and wants the same row XML: text
// that needs escaping, kept spaces, _xHHHH_ sequences, invalid UTF-8, text
// over Excel's cell limit, NULLs, codes, dates and numbers.
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

	f := excelize.NewFile()
	defer f.Close()
	st, err := newStyles(f, "IDR", l)
	if err != nil {
		t.Fatal(err)
	}
	x := newXLSXSheet(f, st, jkt, l, "S", cols, "")
	if _, err := f.NewSheet("S"); err != nil {
		t.Fatal(err)
	}
	for i, c := range cols {
		x.cells[i].StyleID = st.body[c.format]
		if c.format == "text" {
			x.cells[i].StyleID = st.text
		}
	}
	x.cells[5].StyleID = 0 // no style attribute
	sr, err := newSheetRows(len(cols))
	if err != nil {
		t.Fatal(err)
	}
	defer sr.close()
	sw, err := f.NewStreamWriter("S")
	if err != nil {
		t.Fatal(err)
	}
	ref := make([]any, len(cols))
	cells := make([]excelize.Cell, len(cols))
	for _, r := range rows {
		if err := sr.put(r, x); err != nil {
			t.Fatal(err)
		}
		for i, v := range r {
			cells[i] = excelize.Cell{StyleID: x.cells[i].StyleID, Value: excelizeValue(x, v, cols[i])}
			if t, ok := cells[i].Value.(string); ok && v != nil && cellsafe.StartsLikeFormula(t) {
				cells[i].StyleID = st.quoted[cells[i].StyleID] // the quote prefix marks it, not an apostrophe
			}
			ref[i] = &cells[i]
		}
		cell, _ := excelize.CoordinatesToCellName(1, sr.n+1)
		if err := sw.SetRow(cell, ref); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	want := rowsXML(t, buf.Bytes())
	if err := sr.fw.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(flate.NewReader(bytes.NewReader(sr.z.bytes())))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) { // no final block: the zip writer adds it
		t.Fatal(err)
	}
	if crc32.ChecksumIEEE(got) != sr.crc || int64(len(got)) != sr.size {
		t.Errorf("rows: crc %x size %d, counted %x %d", crc32.ChecksumIEEE(got), len(got), sr.crc, sr.size)
	}
	gotRows, wantRows := rowRe.FindAll(got, -1), rowRe.FindAll(want, -1)
	if len(gotRows) != len(rows) || len(wantRows) != len(rows) {
		t.Fatalf("rows: sheetRows %d, excelize %d, want %d", len(gotRows), len(wantRows), len(rows))
	}
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

func TestCRC32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range [][2]int{{0, 0}, {0, 5}, {5, 0}, {1, 1}, {100, 3}, {7, 1 << 20}, {1 << 16, 12345}} {
		a, b := make([]byte, n[0]), make([]byte, n[1])
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b))); got != want {
			t.Errorf("%d+%d bytes: %08x, want %08x", n[0], n[1], got, want)
		}
	}
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
	x.cells[0].StyleID, x.cells[1].StyleID = st.body["decimal1"], st.text
	sr, err := newSheetRows(len(cols))
	if err != nil {
		t.Fatal(err)
	}
	defer sr.close()
	if err := sr.put([]any{nil, nil}, x); err != nil {
		t.Fatal(err)
	}
	if err := sr.fw.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(flate.NewReader(bytes.NewReader(sr.z.bytes())))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf(`<c r="A2" s="%d" t="inlineStr"><is><t>belum teramati`, st.reason),
		fmt.Sprintf(`<c r="B2" s="%d" t="inlineStr"><is><t>tidak ada`, st.text)} {
		if !strings.Contains(string(got), want) {
			t.Errorf("row %s\nwant %s", got, want)
		}
	}
}

// bytes is what c holds, in one slice.
func (c *chunks) bytes() []byte {
	var b bytes.Buffer
	_ = c.writeTo(&b)
	return b.Bytes()
}

// TestChunksKeepBytes: writes of every size, across chunk boundaries, come back in order.
func TestChunksKeepBytes(t *testing.T) {
	var c chunks
	var want []byte
	for i, n := range []int{0, 1, firstChunk - 2, 3, firstChunk, 5 * firstChunk, maxChunk + 7, 100, 3 * maxChunk} {
		p := make([]byte, n)
		for k := range p {
			p[k] = byte(i*31 + k)
		}
		if m, err := c.Write(p); m != n || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", n, m, err)
		}
		want = append(want, p...)
	}
	if c.Len() != len(want) || !bytes.Equal(c.bytes(), want) {
		t.Fatalf("chunks hold %d bytes, not the %d written", c.Len(), len(want))
	}
	for _, b := range c.bufs {
		if cap(b) > maxChunk {
			t.Errorf("a chunk of %d bytes", cap(b))
		}
	}
}
