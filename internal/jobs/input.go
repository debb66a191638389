package jobs

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/xuri/excelize/v2"
)

// InputError is one problem in an input file, with where it is.
type InputError struct {
	File   string
	Sheet  string // xlsx only
	Line   int    // 1-based; the header is line 1 of a spreadsheet
	Column string // "C (toEmail)", or "" for a whole-line problem
	Value  string // the cell as read, when the message does not already show it
	Msg    string
}

func (e *InputError) Error() string {
	where := e.File
	if e.Sheet != "" {
		where += " sheet " + strconv.Quote(e.Sheet)
	}
	if e.Line > 0 {
		where += " line " + strconv.Itoa(e.Line)
	}
	if e.Column != "" {
		where += " column " + e.Column
	}
	if e.Value != "" {
		where += " value " + strconv.Quote(e.Value)
	}
	return where + ": " + e.Msg
}

// InputErrors are all the problems found in one input file; any of them means nothing is sent.
type InputErrors []*InputError

// maxReported bounds the problems listed; a wrong file would otherwise print thousands.
const maxReported = 50

func (es InputErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s) in the input, nothing was planned or sent:", len(es))
	for i, e := range es {
		if i == maxReported {
			fmt.Fprintf(&b, "\n  … and %d more", len(es)-maxReported)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	return b.String()
}

// table is an input file read into memory.
type table struct {
	file   string
	sheet  string
	xlsx   bool
	header []string
	rows   []inputRow
}

type inputRow struct {
	line  int
	cells []string
	types map[int]excelize.CellType // xlsx: the type of each numeric-looking cell, by column; nil when none
}

// canonical folds a header for matching: "Customer ID", "customer_id" and "customerId" are one column.
func canonical(h string) string {
	h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
	return strings.NewReplacer(" ", "", "_", "", "-", "", ".", "").Replace(h)
}

// colName is the spreadsheet letter of a 0-based column index.
func colName(i int) string {
	s, err := excelize.ColumnNumberToName(i + 1)
	if err != nil {
		return strconv.Itoa(i + 1)
	}
	return s
}

// Input limits, checked before anything is parsed: a job file is a reviewed spreadsheet, not a data dump,
// and a wrong path (a device, a pipe) must fail at once instead of filling memory or blocking.
const (
	MaxInputBytes = 10 << 20 // 10 MiB
	MaxInputRows  = 10_000   // data rows, the header not counted
	// maxUnzipped bounds what an .xlsx may expand to (it is a zip archive).
	maxUnzipped = 200 << 20
)

// readTable reads a CSV or XLSX file. For a workbook, the first sheet whose header has every column
// wanted reports true for is used, so a report workbook with several sheets can be fed in as it is.
func readTable(path string, wanted func(header []string) bool) (*table, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".csv" && ext != ".txt" && ext != ".xlsx" && ext != ".xlsm" {
		return nil, InputErrors{{File: path, Msg: fmt.Sprintf("unknown file type %q: give a .csv or .xlsx file", filepath.Ext(path))}}
	}
	b, err := readRegular(path)
	if err != nil {
		return nil, err
	}
	if ext == ".xlsx" || ext == ".xlsm" {
		return readXLSX(path, b, wanted)
	}
	return readCSV(path, b)
}

// readRegular reads a regular file of at most MaxInputBytes. It opens without blocking (a FIFO would wait for
// a writer) and checks what was opened, so a symlink to a device is caught too.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, InputErrors{{File: path, Msg: fmt.Sprintf("not a regular file (%s): give a saved .csv or .xlsx file",
			fileKind(st.Mode()))}}
	}
	if st.Size() > MaxInputBytes {
		return nil, InputErrors{{File: path, Msg: fmt.Sprintf("the file is %s, more than the %s a job file may have: split it",
			byteSize(st.Size()), byteSize(MaxInputBytes))}}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read input %s: %w", path, err)
	}
	if len(b) > MaxInputBytes { // it grew after the check
		return nil, InputErrors{{File: path, Msg: fmt.Sprintf("the file is more than the %s a job file may have: split it",
			byteSize(MaxInputBytes))}}
	}
	return b, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

func byteSize(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func tooManyRows(t *table) InputErrors {
	return InputErrors{{File: t.file, Sheet: t.sheet, Msg: fmt.Sprintf("more than %d data rows: split the file into parts of at most %d rows",
		MaxInputRows, MaxInputRows)}}
}

func readCSV(path string, b []byte) (*table, error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	r := csv.NewReader(bytes.NewReader(b))
	r.Comma = sniffDelimiter(b)
	r.FieldsPerRecord = -1
	t := &table{file: path}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, InputErrors{{File: path, Line: pe.Line,
					Msg: fmt.Sprintf("malformed CSV at character %d: %v", pe.Column, pe.Err)}}
			}
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if t.header == nil {
			t.header = rec
			continue
		}
		if len(t.rows) == MaxInputRows {
			return nil, tooManyRows(t)
		}
		t.rows = append(t.rows, inputRow{line: line, cells: undoCellsafe(rec)})
	}
	if t.header == nil {
		return nil, InputErrors{{File: path, Line: 1, Msg: "the file is empty: a header row is required"}}
	}
	return t, nil
}

// sniffDelimiter picks ; or tab over , when the header line has more of them: spreadsheets saved in
// locales with a decimal comma write semicolons.
func sniffDelimiter(b []byte) rune {
	first, _, _ := bytes.Cut(b, []byte("\n"))
	best, n := ',', bytes.Count(first, []byte(","))
	for _, d := range []rune{';', '\t'} {
		if c := bytes.Count(first, []byte(string(d))); c > n {
			best, n = d, c
		}
	}
	return best
}

func readXLSX(path string, b []byte, wanted func([]string) bool) (*table, error) {
	f, err := excelize.OpenReader(bytes.NewReader(b), excelize.Options{UnzipSizeLimit: maxUnzipped,
		UnzipXMLSizeLimit: maxUnzipped / 2})
	if err != nil {
		return nil, InputErrors{{File: path, Msg: fmt.Sprintf("not a readable .xlsx workbook: %v", err)}}
	}
	defer f.Close()
	var first *table
	for _, sh := range f.GetSheetList() {
		t, err := readSheet(f, path, sh)
		if err != nil {
			return nil, err
		}
		if t.header == nil {
			continue
		}
		if wanted(t.header) {
			return t, nil
		}
		if first == nil {
			first = t
		}
	}
	if first == nil {
		return nil, InputErrors{{File: path, Msg: "no sheet has a header row"}}
	}
	return first, nil // its header will be reported as wrong
}

// readSheet streams one sheet, stopping at the row cap. Each cell that looks numeric keeps its cell type, so
// a TRUE cell (stored as 1) is not taken for the number 1.
func readSheet(f *excelize.File, path, sh string) (*table, error) {
	rows, err := f.Rows(sh)
	if err != nil {
		return nil, fmt.Errorf("read %s sheet %q: %w", path, sh, err)
	}
	defer rows.Close()
	t := &table{file: path, sheet: sh, xlsx: true}
	for i := 0; rows.Next(); i++ {
		// Raw values: amounts without thousands separators, dates as serial numbers.
		cells, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return nil, fmt.Errorf("read %s sheet %q row %d: %w", path, sh, i+1, err)
		}
		if t.header == nil {
			if !blank(cells) {
				t.header = cells
			}
			continue
		}
		if blank(cells) {
			continue
		}
		if len(t.rows) == MaxInputRows {
			return nil, tooManyRows(t)
		}
		row := inputRow{line: i + 1, cells: undoCellsafe(cells)}
		for k, c := range cells {
			if _, err := strconv.ParseFloat(strings.TrimSpace(c), 64); err != nil {
				continue
			}
			name, _ := excelize.CoordinatesToCellName(k+1, i+1)
			typ, err := f.GetCellType(sh, name)
			if err != nil {
				continue
			}
			if row.types == nil {
				row.types = map[int]excelize.CellType{}
			}
			row.types[k] = typ
		}
		t.rows = append(t.rows, row)
	}
	return t, rows.Error()
}

// undoCellsafe takes off the apostrophe billsync's reports and job files put in front of text a
// spreadsheet would run as a formula: a report sheet read back as a job's input carries the
// customer's e-mail as the service has it, not as defused. Spreadsheets drop their own
// text-marking apostrophe when they save, so any left came from billsync.
func undoCellsafe(cells []string) []string {
	for i, c := range cells {
		cells[i] = cellsafe.Undo(c)
	}
	return cells
}

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
