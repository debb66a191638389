package sheetxml

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// awkwardRows are cells that test the writer: text that needs escaping, kept spaces, _xHHHH_
// sequences, invalid UTF-8, text over Excel's cell limit, empty cells, numbers of every sort,
// booleans, styles and none.
func awkwardRows() [][]Cell {
	long := strings.Repeat("é😀", 20000)
	texts := []string{
		"plain", "", "Ñoño & <Sons> \"quoted\" 'single'", " leading", "trailing\t", "line\nbreak\r\n",
		"=1+1", "+62 812-3456", "-minus", "_x0041_ literal", "a_x005F_x0041_b", "_x005F_", "_xZZZZ_ no", "tab\there",
		"_x005F_x005F_", "_x005f_ lower", "__x0041__",
		"_x0041", "x0041_", "_x005F_x00", "_x_x0041_", "end _x0041_",
		"\x01control\x1f", "bad \xff utf8", "ok\u2028sep", "\uFFFE", long, strings.Repeat("a", 40000),
	}
	var rows [][]Cell
	for i, s := range texts {
		rows = append(rows, []Cell{{Style: 3, Type: String, Str: s}, {Style: 5, Type: Int, Int: int64(i - 3)},
			{Style: 7, Type: Number, Num: 46203}, {Style: 8, Type: Number, Num: 46203.7112}, {Type: Empty},
			{Style: 12, Type: Number, Num: float64(i) / 3}, {Style: 1, Type: Bool, Int: int64(i % 2)}})
	}
	rows = append(rows,
		[]Cell{{Type: Empty}, {Style: 5, Type: Number, Num: math.NaN()}, {Type: Number, Num: math.Inf(-1)},
			{Type: Int, Int: math.MinInt64}, {Type: Number, Num: 1e21}, {Type: Number, Num: 1.5e-7}, {Type: Number, Num: math.Copysign(0, -1)}},
	)
	return rows
}

// TestSplicedAsStream writes awkward cells, some rows taller than the default, as Spliced rows
// and as excelize's StreamWriter writes them (Stream), and wants the same row XML.
func TestSplicedAsStream(t *testing.T) {
	rows := awkwardRows()
	spliced := sheetBody(t, Spliced, rows)
	stream := sheetBody(t, Stream, rows)
	got, want := rowRe.FindAll(spliced, -1), rowRe.FindAll(stream, -1)
	if len(got) != len(rows)+2 || len(want) != len(rows)+2 { // and the header and totals rows
		t.Fatalf("rows: spliced %d, stream %d, want %d", len(got), len(want), len(rows)+2)
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("row %d:\n got %.600s\nwant %.600s", i+1, got[i], want[i])
		}
	}
	if !bytes.Equal(spliced, stream) {
		t.Error("the sheet parts differ outside their rows")
	}
}

// TestLostEscapesKept: text excelize loses (sequences sharing an underscore, half a surrogate
// pair) is written so a spreadsheet reads it back (TestEscapeLikeTextReadsBack in report).
func TestLostEscapesKept(t *testing.T) {
	for _, s := range []string{"_xD800_ surrogate", "_x005F_xD800_", "_x0041_x0042_"} {
		rows := [][]Cell{{{Type: String, Str: s}}}
		got, want := rowRe.FindAll(sheetBody(t, Spliced, rows), -1)[1], rowRe.FindAll(sheetBody(t, Stream, rows), -1)[1]
		if bytes.Equal(got, want) {
			t.Errorf("%q: written as excelize does, which loses it: %s", s, got)
		}
		if !bytes.Contains(got, []byte("_x005F_x")) {
			t.Errorf("%q: its escape-like sequence not escaped: %s", s, got)
		}
	}
}

// sheetBody writes rows into a one-sheet workbook after a header row, as the report does, and
// returns the sheet's part; it checks the CRC and size the spliced rows counted.
func sheetBody(t *testing.T, mode Mode, rows [][]Cell) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	r, err := New(mode, len(rows[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for k, row := range rows {
		// some rows taller, as wrapped text makes them (PutTall)
		if err := r.PutTall(row, []float64{0, 30, 0, 45.75}[k%4]); err != nil {
			t.Fatal(err)
		}
	}
	if r.Len() != len(rows) {
		t.Errorf("Len %d, want %d", r.Len(), len(rows))
	}
	if mode == Spliced {
		if err := r.fw.Flush(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(flate.NewReader(bytes.NewReader(r.z.bytes())))
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) { // no final block: the zip writer adds it
			t.Fatal(err)
		}
		if crc32.ChecksumIEEE(got) != r.crc || int64(len(got)) != r.size {
			t.Errorf("rows: crc %x size %d, counted %x %d", crc32.ChecksumIEEE(got), len(got), r.crc, r.size)
		}
	}
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.SetRow("A1", []any{"header"}); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteStream(sw); err != nil {
		t.Fatal(err)
	}
	total, _ := excelize.CoordinatesToCellName(1, len(rows)+2)
	if err := sw.SetRow(total, []any{"total", 1}); err != nil {
		t.Fatal(err)
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter {
		return NewZipWriter(&buf, map[string]*Rows{"xl/worksheets/sheet1.xml": r})
	})
	if _, err := f.WriteTo(io.Discard); err != nil {
		t.Fatal(err)
	}
	return part(t, buf.Bytes(), "xl/worksheets/sheet1.xml")
}

var rowRe = regexp.MustCompile(`(?s)<row r="\d+"[^>]*>.*?</row>`)

// part is a part of a zip file.
func part(t *testing.T, file []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		if zf.Name != name {
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
	t.Fatalf("no %s", name)
	return nil
}

// TestPlainTextEveryByte: plainText passes text through unescaped only when it holds no byte
// XML or Excel's _xHHHH_ escapes would read differently.
func TestPlainTextEveryByte(t *testing.T) {
	old := func(s string) bool { // the comparisons the table replaced
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' ||
				c == '_' && i+1 < len(s) && s[i+1] == 'x' {
				return false
			}
		}
		return true
	}
	for c := range 256 {
		for _, s := range []string{string(rune(c)), string([]byte{byte(c)}), "a" + string([]byte{byte(c)}) + "b",
			"_" + string([]byte{byte(c)}), string([]byte{byte(c)}) + "_x0041_", "x_", "_x", "a_xb", "__x"} {
			if got, want := plainText(s), old(s); got != want {
				t.Errorf("plainText(%q) = %v, want %v", s, got, want)
			}
		}
	}
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
