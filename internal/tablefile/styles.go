package tablefile

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/report/sheetxml"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/xuri/excelize/v2"
)

// Styles are a workbook's style ids, the same in every workbook billsync writes (reports, plans,
// results): the header, text, numbers per column format for body and totals rows.
type Styles struct {
	Header, Title, Subtitle, Label, Wrap, Check, CheckBad, DateLeft, Text int
	// TextWrap is text of a column given a width: it wraps within it, the row as tall as it
	// needs, rather than running under the next column or widening the page.
	TextWrap int
	// SumCheck and SumCheckBad are Check and CheckBad on a summary: they wrap, as a long line
	// there (the as-of warning) would otherwise run on over the columns beside it and shrink the
	// printed page to fit. A data sheet's check row does not wrap: it runs on over the empty
	// cells of its row.
	SumCheck, SumCheckBad int
	// Value is a summary value without a number format. Every summary cell is aligned to the
	// top: a row is as tall as its longest wrapped text, and a value at the bottom (the default)
	// would print a line below its label.
	Value int
	// Reason is a number column's NULL shown as its reason ("belum teramati"): aligned right
	// with the numbers, not left against the column before it.
	Reason int
	// TableHead and TableHeadLabel head a table on a summary: each figure's title over its
	// column, aligned right with the figures; the label column's.
	TableHead, TableHeadLabel int
	// TableTotal is the label (and a blank figure) of a summary table's totals row.
	TableTotal int
	// Body, Total and Left are a column format's number style in a body row, a totals row, and
	// a summary line (bold, aligned left); Total["text"] is a totals row's text.
	Body, Total, Left map[string]int
	// Quoted is each body style's twin with the quote prefix: a text cell a spreadsheet would
	// read as a formula when edited (= + - @) is marked by its style, not by an apostrophe
	// in the text, so it shows as it is ("-Budi") and stays text when a reader edits it.
	Quoted map[int]int
}

// NewStyles adds the styles to f, in the same order (the same ids) in every workbook, number
// formats in the locale's and money in the currency's.
func NewStyles(f *excelize.File, currency, locale string) (*Styles, error) {
	var err error
	s := &Styles{Body: map[string]int{}, Total: map[string]int{}, Left: map[string]int{}}
	border := []excelize.Border{{Type: "top", Color: "000000", Style: 1}, {Type: "bottom", Color: "000000", Style: 6}}
	add := func(st *excelize.Style) int {
		id, err := f.NewStyle(st)
		if err != nil {
			panic(err) // styles are constants of this file; a failure is a programming error
		}
		return id
	}
	s.Header = add(sheetfmt.HeaderStyle())
	under := []excelize.Border{{Type: "bottom", Color: "000000", Style: 1}}
	s.TableHead = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: under,
		Alignment: &excelize.Alignment{Horizontal: "right", Vertical: "top", WrapText: true}})
	s.TableHeadLabel = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: under,
		Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.TableTotal = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: border,
		Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.Title = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Size: 16, Color: "1F4E79"}})
	s.Subtitle = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Size: 12, Color: "1F4E79"}, Alignment: &excelize.Alignment{Vertical: "top"}})
	s.Value = add(&excelize.Style{Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.Label = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.Wrap = add(&excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}})
	// Body text does not wrap: readers do not grow the rows of a file they
	// did not write, so wrapped text would run over the next row.
	// The indent keeps text clear of a right-aligned number beside it; spreadsheets apply an
	// indent only to text aligned left explicitly, not to the general alignment.
	s.Text = add(&excelize.Style{Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "top", Indent: 1}})
	s.TextWrap = add(&excelize.Style{Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "top", Indent: 1, WrapText: true}})
	s.Reason = add(&excelize.Style{Alignment: &excelize.Alignment{Horizontal: "right", Vertical: "top"}})
	dateFmt, _ := sheetfmt.NumberFormat("date", currency, locale)
	s.DateLeft = add(&excelize.Style{CustomNumFmt: &dateFmt, Alignment: &excelize.Alignment{Horizontal: "left"}})
	s.Check = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Italic: true, Color: "375623"}, Alignment: &excelize.Alignment{Vertical: "top"}})
	s.CheckBad = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Color: "C00000"}, Alignment: &excelize.Alignment{Vertical: "top"}})
	s.SumCheck = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Italic: true, Color: "375623"}, Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.SumCheckBad = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Color: "C00000"}, Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.Total["text"] = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: border})
	for _, k := range slices.Sorted(maps.Keys(sheetfmt.NumFmts)) { // sorted: the same style ids in every run
		s.addFormat(add, k, currency, locale, border)
	}
	s.addFormat(add, "money", currency, locale, border)
	s.Quoted = map[int]int{}
	for _, id := range append(slices.Sorted(maps.Values(s.Body)), s.Text, s.TextWrap, s.Value, s.Wrap, s.Label) {
		if s.Quoted[id], err = quotePrefixed(f, id); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// quotePrefixed adds a twin of style id with the quote prefix ("text, even when edited"),
// which excelize's Style cannot say: the cell format is copied in the workbook's style sheet.
func quotePrefixed(f *excelize.File, id int) (int, error) {
	if f.Styles == nil || f.Styles.CellXfs == nil || id < 0 || id >= len(f.Styles.CellXfs.Xf) {
		return 0, fmt.Errorf("style %d: not in the workbook's cell formats", id)
	}
	xf := f.Styles.CellXfs.Xf[id]
	xf.QuotePrefix = boolPtr(true)
	f.Styles.CellXfs.Xf = append(f.Styles.CellXfs.Xf, xf)
	f.Styles.CellXfs.Count = len(f.Styles.CellXfs.Xf)
	return len(f.Styles.CellXfs.Xf) - 1, nil
}

func (s *Styles) addFormat(add func(*excelize.Style) int, format, currency, locale string, border []excelize.Border) {
	v, _ := sheetfmt.NumberFormat(format, currency, locale)
	top := &excelize.Alignment{Vertical: "top"}
	s.Body[format] = add(&excelize.Style{CustomNumFmt: &v, Alignment: top})
	s.Total[format] = add(&excelize.Style{CustomNumFmt: &v, Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: border, Alignment: top})
	s.Left[format] = add(&excelize.Style{CustomNumFmt: &v, Font: &excelize.Font{Family: "Calibri", Bold: true}, Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "top"}})
}

func boolPtr(b bool) *bool { return &b }

// MaxCellText is Excel's limit on the characters in one cell.
const MaxCellText = 32767

// TextCell is text t as a body cell of style s holds it: text a spreadsheet would run as a
// formula takes the style's twin with the quote prefix, where it has one (shown as it is, kept text when a
// reader edits it); text longer than a cell holds is cut to fit.
func (s *Styles) TextCell(t string, style int) sheetxml.Cell {
	if t == "" {
		return sheetxml.Cell{Style: style, Type: sheetxml.String}
	}
	if q, ok := s.Quoted[style]; ok && cellsafe.StartsLikeFormula(t) {
		style = q
	}
	if len(t) > MaxCellText-1 && utf8.RuneCountInString(t) > MaxCellText-1 {
		t = string([]rune(t)[:MaxCellText-1])
	}
	return sheetxml.Cell{Style: style, Type: sheetxml.String, Str: t}
}
