package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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
	return where + ": " + printable(e.Msg)
}

// printable is a message as a terminal may show it: a message may quote a file's text (its
// header), so bytes that are not UTF-8 are written \xNN and characters drawn as nothing, or
// that would reorder or control the terminal, by their code (⟦U+202E⟧, as the reports show them).
func printable(s string) string {
	if utf8.ValidString(s) {
		return lineBreaks.Replace(cellsafe.Visible(s))
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02X`, s[0])
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return lineBreaks.Replace(cellsafe.Visible(b.String()))
}

var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)

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

// Input limits: a job file is a reviewed spreadsheet, not a data dump, and a wrong path (a device, a pipe)
// must fail at once instead of filling memory or blocking. The file's size is checked before it is read, its
// rows (and a workbook's unpacked XML, maxXMLBytes) while it is read, so no file costs more than its caps.
const (
	MaxInputBytes = 10 << 20 // 10 MiB
	MaxInputRows  = 10_000   // data rows, the header not counted
)

// tooManyRows refuses a file at the line of its first row over the cap.
func tooManyRows(t *table, line int) InputErrors {
	return InputErrors{{File: t.file, Sheet: t.sheet, Line: line, Msg: fmt.Sprintf("more than %d data rows: split the file into parts of at most %d rows",
		MaxInputRows, MaxInputRows)}}
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

// The limits of a row, for a CSV's fields as for a workbook's cells.
const (
	// MaxInputColumns bounds the columns a row of a job file may fill; a cell's reference
	// may otherwise make one row as wide as a spreadsheet allows (16,384 columns).
	MaxInputColumns = 256
	// maxCellChars is a spreadsheet's own limit for a cell's text.
	maxCellChars = 32_767
)

func byteSize(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
