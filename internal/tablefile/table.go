// Package tablefile is billsync's one writer of files people open: a table of typed columns as
// a CSV or a workbook, written under a temporary name and renamed into place. The reports write
// their sheets through it (internal/report: its styles, data sheets, saving) and a write job's
// plan and result files are a Table (internal/jobs), so both read, print and defuse alike: the
// CSV is internal/report/csvout's, the body rows internal/report/sheetxml's, the look and print
// setup internal/sheetfmt's. It imports neither internal/report nor internal/jobs.
package tablefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/billsync/billsync/internal/report/csvout"
	"github.com/billsync/billsync/internal/report/sheetxml"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/xuri/excelize/v2"
)

// Column is one column of a Table.
type Column struct {
	Title string
	// Format is a number column's format as sheetfmt names them (money, credit, int …): its
	// values are written into a workbook as numbers in it. "" = text.
	Format string
	// Ref marks a reference column (IDs, links, keys): last, and out of a workbook's print
	// area, so the printed page keeps what a reviewer reads at a readable size.
	Ref bool
	// ShortIDs shows the UUIDs of a text column by their start in a workbook ("customer
	// 00304804… (Made)"), as the reports do: the whole IDs are in the reference columns and the CSV.
	ShortIDs bool
	// Explains marks a column that explains a row (an error, a note): a workbook prints it only
	// when a row has something in it.
	Explains bool
}

// Table is rows under a header. A number column's values are digits (a decimal point at most),
// written as numbers into a workbook; everything else is text.
type Table struct {
	Name    string // the data sheet's name
	Title   string // the summary's title
	Columns []Column
	Rows    [][]string
	Summary Summary
}

// Summary is a workbook's first sheet: label and value lines, then a table of figures with a
// totals row.
type Summary struct {
	Name  string // the sheet's name
	Facts [][2]string
	// Head are the figures table's columns, its labels' first; none = no table.
	Head []Column
	// Rows are the table's rows and Total its totals row: a label, then the figures
	// (int or float64) in their column's format.
	Rows  [][]any
	Total []any
}

// Options say how a table's workbook reads.
type Options struct {
	Locale   string // id (the default) or en: number formats, the footer's words
	Currency string // of money columns; "" = IDR
	Footer   string // the printed footer's left part: what the file is, as of when
}

// Write writes the table as .csv or .xlsx, by the path's extension, creating its directory
// (its mode less the umask: a group may share it).
func Write(path string, t *Table, o Options) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return writeCSV(path, t)
	case ".xlsx":
		return writeXLSX(path, t, o)
	}
	return fmt.Errorf("write %s: unknown file type: want .csv or .xlsx", path)
}

// writeCSV writes the table as the reports' CSVs are (csvout, RFC 4180): UTF-8 with a byte-order
// mark, CRLF, numbers in plain digits, text a spreadsheet would run as a formula marked with an
// apostrophe (which a job's input reading takes off again).
func writeCSV(path string, t *Table) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	cols := make([]csvout.Column, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = csvout.Column{Title: c.Title}
	}
	w, err := csvout.New(f, cols, nil, csvout.RFC)
	if err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	row := make([]any, len(t.Columns))
	for _, r := range t.Rows {
		for i := range row {
			row[i] = r[i]
		}
		if err := w.Write(row); err != nil {
			f.Abort()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// writeXLSX writes a workbook a reviewer can use: the summary sheet, then the rows, numbers as
// numbers in the reports' formats, columns as wide as their contents, printed like the reports
// (A4 landscape, one page wide, the header row on every page, a footer).
func writeXLSX(path string, t *Table, o Options) error {
	t = emptyOutOfPrint(t)
	cur := o.Currency
	if cur == "" {
		cur = "IDR"
	}
	f := excelize.NewFile()
	defer f.Close()
	st, err := NewStyles(f, cur, o.Locale)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.SetSheetName("Sheet1", t.Summary.Name); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	footer := sheetfmt.Footer(o.Footer, o.Locale)
	if err := writeSummary(f, st, t, footer); err != nil {
		return fmt.Errorf("write %s: sheet %s: %w", path, t.Summary.Name, err)
	}
	rows, err := writeRows(f, st, t, footer, o.Locale)
	if err != nil {
		return fmt.Errorf("write %s: sheet %s: %w", path, t.Name, err)
	}
	return Save(f, path, map[string]*sheetxml.Rows{t.Name: rows})
}
