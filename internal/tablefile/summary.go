package tablefile

import (
	"math"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/xuri/excelize/v2"
)

// summarySheet writes a table's summary sheet, which excelize holds whole: it is a few dozen
// cells.
type summarySheet struct {
	f      *excelize.File
	st     *Styles
	name   string
	labelW int // the label column's width, in characters
}

// writeSummary writes the table's title, its facts (label and value, the values running on over
// the empty cells to their right) and its figures table with the totals row, the figures' columns
// as wide as their titles, printed portrait at the scale they need.
func writeSummary(f *excelize.File, st *Styles, t *Table, footer string) error {
	s := &summarySheet{f: f, st: st, name: t.Summary.Name, labelW: 12}
	if err := s.set(CellName(1, 1), t.Title, st.Title); err != nil {
		return err
	}
	row := 3
	for _, fact := range t.Summary.Facts {
		if err := s.set(CellName(1, row), fact[0], st.Label); err != nil {
			return err
		}
		if err := s.set(CellName(2, row), fact[1], st.Text); err != nil {
			return err
		}
		s.labelW = max(s.labelW, utf8.RuneCountInString(fact[0])+2)
		row++
	}
	if err := s.figures(t.Summary, row+1); err != nil {
		return err
	}
	return s.page(t.Summary.Head, footer)
}

// set writes a cell of the sheet in its style; text as a body cell holds it (TextCell).
func (s *summarySheet) set(cell string, v any, style int) error {
	if t, ok := v.(string); ok {
		c := s.st.TextCell(cellsafe.Visible(t), style)
		v, style = c.Str, c.Style
	}
	if err := s.f.SetCellValue(s.name, cell, v); err != nil {
		return err
	}
	return s.f.SetCellStyle(s.name, cell, cell, style)
}

// figures writes the figures table from row on: its header, a row per group, the totals row.
func (s *summarySheet) figures(sum Summary, row int) error {
	if len(sum.Head) == 0 {
		return nil
	}
	for i, c := range sum.Head {
		if err := s.set(CellName(i+1, row), c.Title, s.st.Header); err != nil {
			return err
		}
	}
	if err := s.f.SetRowHeight(s.name, row, 48); err != nil {
		return err
	}
	for _, r := range sum.Rows {
		row++
		if err := s.figureRow(sum.Head, row, r, s.st.Text, s.st.Body); err != nil {
			return err
		}
		if name, ok := r[0].(string); ok {
			s.labelW = max(s.labelW, utf8.RuneCountInString(name)+3)
		}
	}
	return s.figureRow(sum.Head, row+1, sum.Total, s.st.Total["text"], s.st.Total)
}

// figureRow writes a row of the figures table: its label in style label, each figure in its
// column's number style of styles; a whole number as an integer.
func (s *summarySheet) figureRow(head []Column, row int, vals []any, label int, styles map[string]int) error {
	for i, v := range vals {
		style := label
		if i > 0 {
			style = styles[head[i].Format]
		}
		if fv, ok := v.(float64); ok && fv == math.Trunc(fv) && math.Abs(fv) < 1e15 {
			v = int64(fv)
		}
		if err := s.set(CellName(i+1, row), v, style); err != nil {
			return err
		}
	}
	return nil
}

// page sizes the columns (the label's to its longest label, at most maxColWidth; a figure's to
// its title, at least 18) and sets the page up: the print scale the columns need, the title row
// on every page.
func (s *summarySheet) page(head []Column, footer string) error {
	if err := s.f.SetColWidth(s.name, "A", "A", float64(min(s.labelW, maxColWidth))); err != nil {
		return err
	}
	for i := 2; i <= len(head); i++ {
		col, _ := excelize.ColumnNumberToName(i)
		if err := s.f.SetColWidth(s.name, col, col, float64(max(18, headerWidth(head[i-1].Title)))); err != nil {
			return err
		}
	}
	p := sheetfmt.Page{TitleFirst: 1, TitleLast: 1}
	for i := 1; i <= max(len(head), 2); i++ {
		col, _ := excelize.ColumnNumberToName(i)
		w, err := s.f.GetColWidth(s.name, col)
		if err != nil {
			return err
		}
		p.Widths = append(p.Widths, w)
	}
	if err := sheetfmt.PageSetup(s.f, s.name, footer, p); err != nil {
		return err
	}
	return sheetfmt.PrintTitles(s.f, s.name, p)
}
