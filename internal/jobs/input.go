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

	"github.com/xuri/excelize/v2"
)

// InputError is one problem in an input file, with where it is.
type InputError struct {
	File   string
	Sheet  string // xlsx only
	Line   int    // 1-based; the header is line 1 of a spreadsheet
	Column string // "C (toEmail)", or "" for a whole-line problem
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

// readTable reads a CSV or XLSX file. For a workbook, the first sheet whose header has every column
// wanted reports true for is used, so a report workbook with several sheets can be fed in as it is.
func readTable(path string, wanted func(header []string) bool) (*table, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".txt":
		return readCSV(path)
	case ".xlsx", ".xlsm":
		return readXLSX(path, wanted)
	}
	return nil, fmt.Errorf("%s: unknown file type %q: want .csv or .xlsx", path, filepath.Ext(path))
}

func readCSV(path string) (*table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
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
		t.rows = append(t.rows, inputRow{line: line, cells: rec})
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

func readXLSX(path string, wanted func([]string) bool) (*table, error) {
	f, err := excelize.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("read input %s: %w", path, err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	var first *table
	for _, sh := range sheets {
		// Raw values: amounts without thousands separators, dates as serial numbers.
		rows, err := f.GetRows(sh, excelize.Options{RawCellValue: true})
		if err != nil {
			return nil, fmt.Errorf("read %s sheet %q: %w", path, sh, err)
		}
		t := &table{file: path, sheet: sh, xlsx: true}
		for i, cells := range rows {
			if t.header == nil {
				if blank(cells) {
					continue
				}
				t.header = cells
				continue
			}
			t.rows = append(t.rows, inputRow{line: i + 1, cells: cells})
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

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
