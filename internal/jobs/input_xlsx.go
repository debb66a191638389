package jobs

import (
	"archive/zip"
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// An .xlsx is a zip archive of XML parts, and deflate packs a sheet of a million identical rows
// into a few hundred kilobytes: the file's size says nothing of what reading it costs. So a
// workbook is read here as a stream, part by part straight out of the archive, never unpacked
// whole: the XML read, shared strings included, is counted against maxXMLBytes, a sheet's rows
// against MaxInputRows as they come, and reading stops at the first limit passed. A sheet whose
// header is not the one wanted is left after its header row.

const (
	// maxXMLBytes bounds the XML read out of a workbook. A sheet of MaxInputRows rows of a
	// dozen columns is a few megabytes of XML, even as a report writes it (inline text, styles).
	maxXMLBytes = 32 << 20
)

// errXMLBudget is returned by budgetReader once the workbook's XML passes maxXMLBytes.
var errXMLBudget = errors.New("XML budget spent")

// budgetReader counts what is read through it against a workbook's shared budget.
type budgetReader struct {
	r    io.Reader
	left *int64
}

func (b budgetReader) Read(p []byte) (int, error) {
	if *b.left <= 0 {
		return 0, errXMLBudget
	}
	if int64(len(p)) > *b.left {
		p = p[:*b.left]
	}
	n, err := b.r.Read(p)
	*b.left -= int64(n)
	return n, err
}

type xlsxSheetRef struct{ name, part string }

// workbookReader reads the sheets of one .xlsx.
type workbookReader struct {
	file   string
	zr     *zip.Reader
	parts  map[string]*zip.File
	left   int64 // XML bytes that may still be read
	shared []string
	sheets []xlsxSheetRef
}

func (w *workbookReader) fail(sheet string, line int, format string, args ...any) InputErrors {
	return InputErrors{{File: w.file, Sheet: sheet, Line: line, Msg: fmt.Sprintf(format, args...)}}
}

func (w *workbookReader) budgetSpent(sheet string, line int) InputErrors {
	return w.fail(sheet, line, "the workbook unpacks to more than %d MiB of sheet data, more than a job file of %d rows has: "+
		"split it, or save the sheet as CSV UTF-8", maxXMLBytes>>20, MaxInputRows)
}

func openWorkbook(file string, r io.ReaderAt, size int64) (*workbookReader, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, InputErrors{{File: file, Msg: fmt.Sprintf("not a readable .xlsx workbook (%v): save it in Excel as "+
			"\"Excel Workbook (.xlsx)\", without a password", err)}}
	}
	w := &workbookReader{file: file, zr: zr, parts: map[string]*zip.File{}, left: maxXMLBytes}
	for _, f := range zr.File {
		w.parts[strings.TrimPrefix(f.Name, "/")] = f
	}
	if err := w.readWorkbook(); err != nil {
		return nil, err
	}
	return w, nil
}

// part opens one part of the archive, its reading counted against the budget.
func (w *workbookReader) part(name string) (io.ReadCloser, error) {
	f, ok := w.parts[name]
	if !ok {
		return nil, fmt.Errorf("the workbook has no part %s", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{bufio.NewReaderSize(budgetReader{rc, &w.left}, 64<<10), rc}, nil
}

// unmarshalPart decodes a small part (the workbook's list of sheets, its relationships).
func (w *workbookReader) unmarshalPart(name string, v any) error {
	rc, err := w.part(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	return xml.NewDecoder(rc).Decode(v)
}

// readWorkbook finds the sheets, in the workbook's order, and the shared strings.
func (w *workbookReader) readWorkbook() error {
	var wb struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	var rels struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	bad := func(err error) error {
		if errors.Is(err, errXMLBudget) {
			return w.budgetSpent("", 0)
		}
		return w.fail("", 0, "not a readable .xlsx workbook (%v): save it in Excel as \"Excel Workbook (.xlsx)\"", err)
	}
	if err := w.unmarshalPart("xl/workbook.xml", &wb); err != nil {
		return bad(err)
	}
	if err := w.unmarshalPart("xl/_rels/workbook.xml.rels", &rels); err != nil {
		return bad(err)
	}
	target := map[string]string{}
	sharedPart := ""
	for _, r := range rels.Rels {
		t := r.Target
		if strings.HasPrefix(t, "/") {
			t = strings.TrimPrefix(t, "/")
		} else {
			t = path.Join("xl", t)
		}
		target[r.ID] = t
		if strings.HasSuffix(r.Type, "/sharedStrings") {
			sharedPart = t
		}
	}
	for _, s := range wb.Sheets {
		if p, ok := target[s.RID]; ok {
			w.sheets = append(w.sheets, xlsxSheetRef{name: s.Name, part: p})
		}
	}
	if sharedPart != "" {
		if err := w.readShared(sharedPart); err != nil {
			if errors.Is(err, errXMLBudget) {
				return w.budgetSpent("", 0)
			}
			if _, ok := err.(InputErrors); ok {
				return err
			}
			return w.fail("", 0, "the workbook's shared text cannot be read (%v): save it again in Excel as \"Excel Workbook (.xlsx)\"", err)
		}
	}
	return nil
}

// readShared reads the workbook's table of shared text: every item's text runs, without
// phonetic guides.
func (w *workbookReader) readShared(name string) error {
	rc, err := w.part(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	d := xml.NewDecoder(rc)
	var item strings.Builder
	inItem, inT, inPhonetic := false, false, false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				inItem = true
				item.Reset()
			case "rPh":
				inPhonetic = true
			case "t":
				inT = inItem && !inPhonetic
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				inItem = false
				w.shared = append(w.shared, unescapeXLSX(item.String()))
			case "rPh":
				inPhonetic = false
			case "t":
				inT = false
			}
		case xml.CharData:
			if inT {
				if item.Len()+len(t) > 4*maxCellChars {
					return w.fail("", 0, "a shared text of the workbook is longer than the %d characters a cell may hold", maxCellChars)
				}
				item.Write(t)
			}
		}
	}
}

// escapedRe is the _xHHHH_ escape spreadsheets write for characters XML cannot carry.
var escapedRe = regexp.MustCompile(`_x[0-9A-Fa-f]{4}_`)

func unescapeXLSX(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	return escapedRe.ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseUint(m[2:6], 16, 16)
		return string(rune(v))
	})
}

// xlsxCell is a cell as the sheet's XML has it.
type xlsxCell struct {
	col   int
	typ   string
	value strings.Builder
}

// readSheet streams one sheet: its header (the first row not blank) is given to wanted, and
// only when it is wanted are the rows read, each checked against the caps as it comes. A sheet
// not wanted is returned with its header alone.
func (w *workbookReader) readSheet(sh xlsxSheetRef, wanted func([]string) bool) (t *table, isWanted bool, err error) {
	rc, err := w.part(sh.part)
	if err != nil {
		return nil, false, w.fail(sh.name, 0, "the sheet cannot be read (%v): save the workbook again in Excel", err)
	}
	defer rc.Close()
	s := &sheetScan{w: w, sheet: sh.name, wanted: wanted, t: &table{file: w.file, sheet: sh.name, xlsx: true}}
	d := xml.NewDecoder(rc)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return s.t, s.t.header != nil && wanted(s.t.header), nil
		}
		if err != nil {
			return nil, false, s.unreadable(err)
		}
		stop := false
		switch e := tok.(type) {
		case xml.StartElement:
			err = s.start(e)
		case xml.CharData:
			err = s.text(e)
		case xml.EndElement:
			stop, err = s.end(e)
		}
		if err != nil {
			return nil, false, err
		}
		if stop {
			return s.t, false, nil // the rows of a sheet not used are not read
		}
	}
}

// sheetScan is where readSheet is in a sheet's XML: the row being read and its cells so far, the
// cell being read, and which of its elements the text is in.
type sheetScan struct {
	w      *workbookReader
	sheet  string
	wanted func([]string) bool
	t      *table
	line   int // the row being read, 1-based
	cells  []string
	types  map[int]excelize.CellType
	c      *xlsxCell
	// the text read is a cell's value (v), or the text (t) of its inline string (is) but not
	// of a phonetic guide (rPh)
	inValue, inInline, inText, inPhonetic bool
}

// unreadable is the error of XML that cannot be read, or of a workbook past its XML budget.
func (s *sheetScan) unreadable(err error) error {
	if errors.Is(err, errXMLBudget) {
		return s.w.budgetSpent(s.sheet, s.line)
	}
	return s.w.fail(s.sheet, s.line, "the sheet's data cannot be read (%v): save the workbook again in Excel as \"Excel Workbook (.xlsx)\"", err)
}

// start opens an element: a row (its number checked), a cell (its column), or a part of a cell's value.
func (s *sheetScan) start(e xml.StartElement) error {
	switch e.Name.Local {
	case "row":
		return s.startRow(e)
	case "c":
		return s.startCell(e)
	case "v":
		s.inValue = s.c != nil
	case "is":
		s.inInline = s.c != nil
	case "t":
		s.inText = s.inInline && !s.inPhonetic
	case "rPh":
		s.inPhonetic = true
	}
	return nil
}

// startRow starts a row: numbered after the one before, within a spreadsheet's rows.
func (s *sheetScan) startRow(e xml.StartElement) error {
	n := s.line + 1
	if r := attr(e, "r"); r != "" {
		v, err := strconv.Atoi(r)
		if err != nil || v <= s.line || v > excelize.TotalRows {
			return s.w.fail(s.sheet, s.line, "the sheet's row after line %d is numbered %q: save the workbook again in Excel", s.line, r)
		}
		n = v
	}
	if n > excelize.TotalRows {
		return s.w.fail(s.sheet, excelize.TotalRows, "the sheet has more rows than a spreadsheet may have: save the workbook again in Excel")
	}
	s.line, s.cells, s.types = n, nil, nil
	return nil
}

// startCell starts a cell: in its column, right of the cells before it.
func (s *sheetScan) startCell(e xml.StartElement) error {
	col := len(s.cells)
	if r := attr(e, "r"); r != "" {
		v, ok := columnOf(r)
		if !ok || v < col {
			return s.w.fail(s.sheet, s.line, "a cell of the sheet is at %q: save the workbook again in Excel", r)
		}
		col = v
	}
	s.c = &xlsxCell{col: col, typ: attr(e, "t")}
	return nil
}

// text adds text to the cell's value, within what a cell may hold.
func (s *sheetScan) text(e xml.CharData) error {
	if s.c == nil || !s.inValue && !s.inText {
		return nil
	}
	if s.c.value.Len()+len(e) > 4*maxCellChars {
		return s.w.cellTooLong(s.sheet, s.line, s.c.col)
	}
	s.c.value.Write(e)
	return nil
}

// end closes an element: a cell's value is added to its row, a row is the header or a row of the
// table. stop says the sheet's header is not wanted: its rows are not read.
func (s *sheetScan) end(e xml.EndElement) (stop bool, err error) {
	switch e.Name.Local {
	case "v":
		s.inValue = false
	case "is":
		s.inInline = false
	case "t":
		s.inText = false
	case "rPh":
		s.inPhonetic = false
	case "c":
		return false, s.endCell()
	case "row":
		return s.endRow()
	}
	return false, nil
}

// endCell adds the cell's text to its row, in its column, within the columns and characters a job
// file may have; a number keeps its type.
func (s *sheetScan) endCell() error {
	c := s.c
	if c == nil {
		return nil
	}
	s.c = nil
	v, err := s.w.cellText(c)
	if err != nil {
		return s.w.fail(s.sheet, s.line, "column %s: %v: save the workbook again in Excel", colName(c.col), err)
	}
	if v == "" {
		return nil
	}
	if c.col >= MaxInputColumns {
		return s.w.fail(s.sheet, s.line, "a value in column %s, beyond the %d columns a job file may have: "+
			"take it out of the sheet", colName(c.col), MaxInputColumns)
	}
	if utf8.RuneCountInString(v) > maxCellChars {
		return s.w.cellTooLong(s.sheet, s.line, c.col)
	}
	for len(s.cells) < c.col {
		s.cells = append(s.cells, "")
	}
	s.cells = append(s.cells, v)
	if typ, ok := cellTypes(c.typ); ok && looksNumeric(v) {
		if s.types == nil {
			s.types = map[int]excelize.CellType{}
		}
		s.types[c.col] = typ
	}
	return nil
}

// endRow takes the row: the first not blank is the header (stop: not wanted), a blank one is left
// out, the others are the table's rows, at most MaxInputRows.
func (s *sheetScan) endRow() (stop bool, err error) {
	if s.t.header == nil {
		if !blank(s.cells) {
			s.t.header = s.cells
			return !s.wanted(s.t.header), nil
		}
		return false, nil
	}
	if blank(s.cells) {
		return false, nil
	}
	if len(s.t.rows) == MaxInputRows {
		return false, tooManyRows(s.t, s.line)
	}
	s.t.rows = append(s.t.rows, inputRow{line: s.line, cells: undoCellsafe(s.cells), types: s.types})
	return false, nil
}

func (w *workbookReader) cellTooLong(sheet string, line, col int) InputErrors {
	return InputErrors{{File: w.file, Sheet: sheet, Line: line, Column: colName(col),
		Msg: fmt.Sprintf("the cell holds more than the %d characters a spreadsheet cell may have", maxCellChars)}}
}

// cellText is a cell's value as excelize reads it raw: the shared text it points at, inline
// text, or the value as written (a number, 0/1 for TRUE/FALSE, a formula's last result).
func (w *workbookReader) cellText(c *xlsxCell) (string, error) {
	v := c.value.String()
	switch c.typ {
	case "s":
		if strings.TrimSpace(v) == "" {
			return "", nil
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 || i >= len(w.shared) {
			return "", fmt.Errorf("the cell points at shared text %q, which the workbook does not have", v)
		}
		return w.shared[i], nil
	case "inlineStr", "str":
		return unescapeXLSX(v), nil
	}
	return v, nil
}

// cellTypes is the type excelize gives a cell of the t attribute tag.
func cellTypes(tag string) (excelize.CellType, bool) {
	switch tag {
	case "":
		return excelize.CellTypeUnset, true
	case "b":
		return excelize.CellTypeBool, true
	case "d":
		return excelize.CellTypeDate, true
	case "n":
		return excelize.CellTypeNumber, true
	case "e":
		return excelize.CellTypeError, true
	case "s":
		return excelize.CellTypeSharedString, true
	case "str":
		return excelize.CellTypeFormula, true
	case "inlineStr":
		return excelize.CellTypeInlineString, true
	}
	return excelize.CellTypeUnset, false
}

func looksNumeric(v string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return err == nil
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// columnOf is the 0-based column of a cell reference such as "C12".
func columnOf(ref string) (int, bool) {
	col, i := 0, 0
	for ; i < len(ref) && i < 4; i++ {
		c := ref[i] | 0x20 // lower case
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a'+1)
	}
	if i == 0 || col > excelize.MaxColumns {
		return 0, false
	}
	for _, d := range ref[i:] {
		if d < '0' || d > '9' {
			return 0, false
		}
	}
	return col - 1, true
}
