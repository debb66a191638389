// Package sheetxml writes the body rows of a workbook's streamed data sheets. Rows writes them
// one of two ways (Mode): Spliced, the default, writes the worksheet XML itself, deflated as
// the rows come, and the workbook's zip writer (NewZipWriter) splices it into the sheet's part
// after the header row excelize wrote; Stream hands the same cells to excelize's StreamWriter
// after the header row. The XML is byte for byte the same either way (TestSplicedAsStream):
// Spliced is what excelize writes at a fraction of its cost, as StreamWriter.SetRow builds a
// cell reference, a cell struct and escaped copies of the text for every cell, and was most
// of the time of a large report; deflating as the rows come keeps a large sheet at about a
// tenth of its size in memory, with no temporary file. Stream holds the rows until the header
// is written, and is there to hold Spliced to excelize's bytes.
package sheetxml

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/billsync/billsync/internal/report/value"
	"github.com/klauspost/compress/flate"
	"github.com/xuri/excelize/v2"
)

// Mode is how Rows writes: Spliced or Stream.
type Mode int

const (
	// Spliced writes the rows' XML itself, spliced into the sheet's part at save (NewZipWriter).
	Spliced Mode = iota
	// Stream hands the rows to excelize's StreamWriter after the header row (WriteStream).
	Stream
)

// Type is what a Cell holds.
type Type uint8

const (
	Empty  Type = iota // no value: <c r=".." s=".."></c>
	Number             // Num, a number (a date as its serial day)
	Int                // Int
	Bool               // Int 1 or 0
	String             // Str, an inline string
)

// Cell is one cell of a body row: its style and its value, by value so a row of them costs no
// allocation.
type Cell struct {
	Style int
	Type  Type
	Num   float64
	Int   int64
	Str   string
}

// excelize is the cell as excelize's StreamWriter takes it.
func (c *Cell) excelize() excelize.Cell {
	x := excelize.Cell{StyleID: c.Style}
	switch c.Type {
	case Number:
		if !math.IsNaN(c.Num) && !math.IsInf(c.Num, 0) {
			x.Value = c.Num
		}
	case Int:
		x.Value = c.Int
	case Bool:
		x.Value = c.Int != 0
	case String:
		x.Value = c.Str
	}
	return x
}

// Rows are one data sheet's body rows, the first of them row 2 (after the header).
type Rows struct {
	mode Mode
	n    int // rows written
	held [][]excelize.Cell
	// heights of the held rows that are taller than the default, by index in held
	heights map[int]float64
	// Spliced
	z    chunks // the rows as deflate blocks, ending at a byte boundary when finished
	fw   *flate.Writer
	crc  uint32 // of the rows' XML
	size int64  // bytes of the rows' XML
	buf  []byte
	refs [][]byte // column letters
	// attrs[s] is the end of a cell reference with style s's attribute (`" s="7"`), worked out
	// once per style, not per cell
	attrs [][]byte
}

// New makes the body rows of a sheet of cols columns.
func New(mode Mode, cols int) (*Rows, error) {
	r := &Rows{mode: mode}
	if mode == Stream {
		return r, nil
	}
	r.refs = make([][]byte, cols)
	var err error
	if r.fw, err = flate.NewWriter(&r.z, DeflateLevel); err != nil {
		return nil, err
	}
	for i := range r.refs {
		name, err := excelize.ColumnNumberToName(i + 1)
		if err != nil {
			return nil, err
		}
		r.refs[i] = []byte(name)
	}
	return r, nil
}

// Len is the number of rows written.
func (r *Rows) Len() int { return r.n }

// attr is the end of a cell reference and the style attribute of style s (none for 0).
func (r *Rows) attr(s int) []byte {
	if s >= 0 && s < len(r.attrs) && r.attrs[s] != nil {
		return r.attrs[s]
	}
	b := []byte{'"'}
	if s != 0 {
		b = append(b, ` s="`...)
		b = strconv.AppendInt(b, int64(s), 10)
		b = append(b, '"')
	}
	if s >= 0 && s < 1<<16 {
		for len(r.attrs) <= s {
			r.attrs = append(r.attrs, nil)
		}
		r.attrs[s] = b
	}
	return b
}

// Put writes a row of cells.
func (r *Rows) Put(cells []Cell) error { return r.PutTall(cells, 0) }

// PutTall writes a row of cells height points tall (0: the default height), for a row whose
// text wraps: spreadsheets do not grow the rows of a file they did not write.
func (r *Rows) PutTall(cells []Cell, height float64) error {
	r.n++
	if r.mode == Stream {
		row := make([]excelize.Cell, len(cells))
		for i := range cells {
			row[i] = cells[i].excelize()
		}
		if height > 0 {
			if r.heights == nil {
				r.heights = map[int]float64{}
			}
			r.heights[len(r.held)] = height
		}
		r.held = append(r.held, row)
		return nil
	}
	var num [20]byte
	row := strconv.AppendInt(num[:0], int64(r.n+1), 10)
	b := append(r.buf[:0], `<row r="`...)
	b = append(b, row...)
	if height > 0 {
		// as excelize's StreamWriter writes RowOpts.Height
		b = append(b, `" ht="`...)
		b = strconv.AppendFloat(b, height, 'f', -1, 64)
		b = append(b, `" customHeight="1`...)
	}
	b = append(b, `">`...)
	for i := range cells {
		c := &cells[i]
		b = append(b, `<c r="`...)
		b = append(b, r.refs[i]...)
		b = append(b, row...)
		b = append(b, r.attr(c.Style)...)
		b = appendValue(b, c)
		b = append(b, `</c>`...)
	}
	b = append(b, `</row>`...)
	r.buf = b
	r.crc = crc32.Update(r.crc, crc32.IEEETable, b)
	r.size += int64(len(b))
	_, err := r.fw.Write(b)
	return err
}

// appendValue appends the end of a <c> element's attributes and its value, as excelize's
// setCellValFunc and writeCell make them.
func appendValue(b []byte, c *Cell) []byte {
	switch c.Type {
	case Number:
		if math.IsNaN(c.Num) || math.IsInf(c.Num, 0) {
			return append(b, '>')
		}
		b = append(b, `><v>`...)
		b = value.AppendFloat(b, c.Num)
		return append(b, `</v>`...)
	case Int:
		b = append(b, `><v>`...)
		b = strconv.AppendInt(b, c.Int, 10)
		return append(b, `</v>`...)
	case Bool:
		if c.Int != 0 {
			return append(b, ` t="b"><v>1</v>`...)
		}
		return append(b, ` t="b"><v>0</v>`...)
	case String:
		return appendInlineStr(b, c.Str)
	}
	return append(b, '>')
}

// WriteStream writes the rows held (Stream) through sw, from row 2; the header row must be
// written. Spliced rows write nothing here: they are spliced in when the workbook is saved.
func (r *Rows) WriteStream(sw *excelize.StreamWriter) error {
	if r.mode != Stream {
		return nil
	}
	ref := make([]any, 0, 64)
	for k, row := range r.held {
		ref = ref[:0]
		for i := range row {
			ref = append(ref, &row[i])
		}
		cell, err := excelize.CoordinatesToCellName(1, k+2)
		if err != nil {
			return err
		}
		var opts []excelize.RowOpts
		if h, ok := r.heights[k]; ok {
			opts = append(opts, excelize.RowOpts{Height: h})
		}
		if err := sw.SetRow(cell, ref, opts...); err != nil {
			return err
		}
	}
	r.held, r.heights = nil, nil
	return nil
}

// Flush ends the deflated rows written so far at a byte boundary, as splicing them does.
func (r *Rows) Flush() error {
	if r.fw == nil {
		return nil
	}
	return r.fw.Flush()
}

// Spliced says the rows are spliced into the sheet's part at save (NewZipWriter).
func (r *Rows) Spliced() bool { return r.mode == Spliced }

// Close releases the rows held.
func (r *Rows) Close() { r.z, r.held = chunks{}, nil }

// appendInlineStr is excelize's inline string: cut to Excel's limit in UTF-16
// units, space kept when it leads or trails, XML-escaped with newlines
// literal, and literal _xHHHH_ sequences escaped so Excel does not decode them.
func appendInlineStr(b []byte, s string) []byte {
	if len(s) > excelize.TotalCellChars {
		s = truncateUTF16(s, excelize.TotalCellChars)
	}
	b = append(b, ` t="inlineStr"><is><t`...)
	if s != "" && (isXMLSpace(s[0]) || isXMLSpace(s[len(s)-1])) {
		b = append(b, ` xml:space="preserve"`...)
	}
	b = append(b, '>')
	if plainText(s) {
		b = append(b, s...)
	} else {
		var esc bytes.Buffer
		_ = xml.EscapeText(&esc, []byte(s))
		e := strings.ReplaceAll(esc.String(), "&#xA;", "\n")
		if strings.Contains(e, "_x") {
			e = escapeLiteralEscapes(e)
		}
		b = append(b, e...)
	}
	return append(b, `</t></is>`...)
}

func isXMLSpace(c byte) bool { return c == 9 || c == 10 || c == 13 || c == 32 }

// plainText says s needs no escaping: printable ASCII without XML's special
// characters and without an "_x" that could start an escape sequence.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		switch plainBytes[s[i]] {
		case plainNo:
			return false
		case plainUnderscore:
			if i+1 < len(s) && s[i+1] == 'x' {
				return false
			}
		}
	}
	return true
}

// plainBytes classes every byte for plainText: a table, not a chain of comparisons per byte.
var plainBytes = func() (t [256]uint8) {
	for c := range t {
		if c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' {
			t[c] = plainNo
		}
	}
	t['_'] = plainUnderscore
	return t
}()

const (
	plainYes = iota
	plainNo
	plainUnderscore // plain unless an x follows
)

func truncateUTF16(s string, units int) string {
	n := 0
	for i, r := range s {
		if n += utf16.RuneLen(r); n > units {
			return s[:i]
		}
	}
	return s
}

// escapeLiteralEscapes keeps a literal _xHHHH_ in cell text from being read
// as an escaped character: a spreadsheet decodes _xHHHH_ in a string to that
// UTF-16 unit, scanning left to right, so every underscore that starts such a
// sequence is itself written escaped, as _x005F_. For most text that is what
// excelize writes (a test holds the two together); excelize loses two cases
// that this keeps: sequences sharing an underscore (_x0041_x0042_) and one
// naming half a surrogate pair, which its writer drops.
func escapeLiteralEscapes(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	last := 0
	for i := 0; i < len(s); i++ {
		if isEscapeAt(s, i) {
			b.WriteString(s[last:i])
			b.WriteString("_x005F")
			last = i // the underscore itself ends the escape
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// isEscapeAt says s holds _x, four hex digits and _ at i.
func isEscapeAt(s string, i int) bool {
	if i+7 > len(s) || s[i] != '_' || s[i+1] != 'x' || s[i+6] != '_' {
		return false
	}
	for _, c := range []byte(s[i+2 : i+6]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// chunks is a growing byte sequence kept as a list of buffers: unlike a bytes.Buffer it never
// copies what it holds to grow, nor holds up to twice its size (the deflated rows of a large
// sheet are megabytes).
type chunks struct {
	bufs [][]byte
	n    int
}

const (
	firstChunk = 4 << 10
	maxChunk   = 1 << 20
)

func (c *chunks) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(c.bufs) == 0 || len(c.bufs[len(c.bufs)-1]) == cap(c.bufs[len(c.bufs)-1]) {
			size := firstChunk
			if k := len(c.bufs); k > 0 {
				size = min(maxChunk, 2*cap(c.bufs[k-1]))
			}
			c.bufs = append(c.bufs, make([]byte, 0, size))
		}
		last := &c.bufs[len(c.bufs)-1]
		k := min(len(p), cap(*last)-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
	c.n += n
	return n, nil
}

func (c *chunks) Len() int { return c.n }

// writeTo writes the bytes held to w, in order.
func (c *chunks) writeTo(w io.Writer) error {
	for _, b := range c.bufs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// DeflateLevel is klauspost/compress's level 1: far less CPU than the
// higher levels for somewhat larger workbooks (docs/performance.md).
// The reports are bound by CPU, and a few MB more of a workbook cost nobody
// a second.
const DeflateLevel = 1

// splicingZip is the workbook's zip writer: parts go straight onto the file,
// compressed by klauspost/compress's deflate, and each streamed data sheet gets
// its body rows (Rows) after its header row.
type splicingZip struct {
	*zip.Writer
	rows    map[string]*Rows // by part path, until spliced
	pending string           // part being buffered for splicing
	part    bytes.Buffer
}

// NewZipWriter is the workbook's zip writer onto w (excelize.File.SetZipWriter): it splices
// the Spliced rows into the parts they are keyed by, the paths of their sheets' parts.
func NewZipWriter(w io.Writer, rows map[string]*Rows) excelize.ZipWriter {
	spliced := map[string]*Rows{}
	for part, r := range rows {
		if r.Spliced() {
			spliced[part] = r
		}
	}
	rows = spliced
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, DeflateLevel)
	})
	return &splicingZip{Writer: zw, rows: rows}
}

func (z *splicingZip) Create(name string) (io.Writer, error) {
	if err := z.splice(); err != nil {
		return nil, err
	}
	if _, ok := z.rows[name]; ok {
		// excelize writes a streamed sheet without its body rows: a few kB to hold
		z.pending = name
		z.part.Reset()
		return &z.part, nil
	}
	return z.Writer.Create(name)
}

// splice writes the buffered sheet part with its rows after the header row:
// the part before them and the part after are deflated on their own, and
// the three byte-aligned deflate streams, only the last one final, make one.
func (z *splicingZip) splice() error {
	if z.pending == "" {
		return nil
	}
	name, rows := z.pending, z.rows[z.pending]
	z.pending = ""
	delete(z.rows, name)
	part := z.part.Bytes()
	data := bytes.Index(part, []byte("<sheetData>"))
	end := -1
	if data >= 0 {
		end = bytes.Index(part[data:], []byte("</row>"))
	}
	if end < 0 {
		return fmt.Errorf("%s: no header row to write the rows after", name)
	}
	at := data + end + len("</row>")
	head, tail := part[:at], part[at:]
	if err := rows.Flush(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var out bytes.Buffer
	fw, err := flate.NewWriter(&out, DeflateLevel)
	if err != nil {
		return err
	}
	if _, err := fw.Write(head); err != nil {
		return err
	}
	if err := fw.Flush(); err != nil {
		return err
	}
	headZ := out.Len()
	fw.Reset(&out)
	if _, err := fw.Write(tail); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	crc := crc32Combine(crc32.ChecksumIEEE(head), rows.crc, rows.size)
	crc = crc32Combine(crc, crc32.ChecksumIEEE(tail), int64(len(tail)))
	w, err := z.Writer.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64:   uint64(out.Len() + rows.z.Len()),
		UncompressedSize64: uint64(int64(len(part)) + rows.size)})
	if err != nil {
		return err
	}
	if _, err := w.Write(out.Bytes()[:headZ]); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := rows.z.writeTo(w); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if _, err := w.Write(out.Bytes()[headZ:]); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	rows.Close()
	return nil
}

// crc32Combine is the CRC-32 of a+b from crc1 of a, crc2 of b and b's length
// (zlib's crc32_combine: appending len2 zero bytes is a linear map over GF(2)).
func crc32Combine(crc1, crc2 uint32, len2 int64) uint32 {
	if len2 <= 0 {
		return crc1 ^ crc2
	}
	times := func(mat *[32]uint32, vec uint32) uint32 {
		var sum uint32
		for i := 0; vec != 0; i, vec = i+1, vec>>1 {
			if vec&1 != 0 {
				sum ^= mat[i]
			}
		}
		return sum
	}
	square := func(sq, mat *[32]uint32) {
		for n := range sq {
			sq[n] = times(mat, mat[n])
		}
	}
	var even, odd [32]uint32
	odd[0] = 0xedb88320 // the CRC-32 polynomial: the operator for one zero bit
	for n, row := 1, uint32(1); n < 32; n, row = n+1, row<<1 {
		odd[n] = row
	}
	square(&even, &odd) // two zero bits
	square(&odd, &even) // four
	for {
		square(&even, &odd) // the first pass: one zero byte
		if len2&1 != 0 {
			crc1 = times(&even, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
		square(&odd, &even)
		if len2&1 != 0 {
			crc1 = times(&odd, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

func (z *splicingZip) Close() error {
	if err := z.splice(); err != nil {
		return err
	}
	for name := range z.rows {
		return fmt.Errorf("%s: the workbook has no such part for its rows", name)
	}
	return z.Writer.Close()
}
