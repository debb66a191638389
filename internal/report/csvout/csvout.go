// Package csvout writes a report's sheet as CSV, in a dialect programs read (RFC 4180 with ISO
// 8601 times) or one a spreadsheet with Indonesian settings opens cleanly. It writes values as
// value normalizes them, rounded as the workbook's cells show them; it knows nothing of files.
package csvout

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/report/value"
)

// Writer writes one sheet as RFC 4180 CSV: UTF-8 with a byte-order mark (so
// Excel on Windows reads names such as Ñoño right), CRLF, the workbook's
// headers in the report's locale, ISO 8601 dates and numbers as the workbook
// shows them, without thousands separators. Each row is built in one reused
// buffer, quoted as encoding/csv quotes (TestCSVFieldsAsEncodingCSV), without
// a string per value.
type Writer struct {
	buf    *bufio.Writer
	cols   []Column
	digits []int // displayDigits of each column's format; noDigits when it has none
	loc    *time.Location
	d      *Dialect
	line   []byte
}

// Column is how a column's values are written.
type Column struct {
	Title  string
	Format string     // the report's column format: its decimals (money, int, percent, ...)
	Kind   value.Kind // of the query's column
	// Empty is written for a NULL of a text column: why there is no value. A number or time
	// column leaves it blank.
	Empty string
	// Name is a code's friendly name; nil writes text as it is.
	Name func(code string) string
}

// Dialect is how a CSV file writes what a spreadsheet must read back as numbers and dates.
type Dialect struct {
	name    string
	sep     byte // between fields
	decimal byte // the decimal mark of numbers
	// plain writes instants as the wall clock of the report's zone, "2006-01-02 15:04:05",
	// which a spreadsheet reads as a date-time (it reads RFC 3339 as text).
	plain bool
}

// CSV dialects. rfc is RFC 4180 with ISO 8601 times, what programs (DuckDB, pandas, R) read
// without settings: the default, because the CSVs are also the data an analyst loads. id is
// what a spreadsheet with Indonesian regional settings opens cleanly: semicolons, decimal
// commas, plain date-times.
var (
	RFC = &Dialect{name: "rfc", sep: ',', decimal: '.'}
	ID  = &Dialect{name: "id", sep: ';', decimal: ',', plain: true}
	// Dialects are the names -csv-dialect accepts.
	Dialects = []string{RFC.name, ID.name}
)

// Name is the dialect's name, as BILLSYNC_CSV_DIALECT says it.
func (d *Dialect) Name() string { return d.name }

// DialectOf is the dialect of a name.
func DialectOf(name string) (*Dialect, error) {
	switch name {
	case RFC.name:
		return RFC, nil
	case ID.name:
		return ID, nil
	}
	return nil, fmt.Errorf("CSV dialect %q: want %s", name, strings.Join(Dialects, " or "))
}

// BOM is the byte-order mark every file starts with.
const BOM = "\ufeff"

// noDigits marks a column whose format is not numeric (displayDigits has no entry).
const noDigits = -2

// New writes the byte-order mark and the header line of cols to w, and returns the writer of
// the rows; nil d is RFC.
func New(w io.Writer, cols []Column, loc *time.Location, d *Dialect) (*Writer, error) {
	buf := bufio.NewWriterSize(w, 256<<10)
	buf.WriteString(BOM)
	if d == nil {
		d = RFC
	}
	c := &Writer{buf: buf, cols: cols, digits: make([]int, len(cols)), loc: loc, d: d}
	for i, col := range cols {
		c.digits[i] = noDigits
		if d, ok := displayDigits[col.Format]; ok {
			c.digits[i] = d
		}
		c.line = appendFieldSep(c.line, i, cellsafe.Text(col.Title), d.sep)
	}
	c.line = append(c.line, "\r\n"...)
	if _, err := buf.Write(c.line); err != nil {
		return nil, err
	}
	return c, nil
}

// Write writes a row.
func (c *Writer) Write(vals []any) error {
	line := c.line[:0]
	sep := c.d.sep
	for i, v := range vals {
		col := &c.cols[i]
		switch t := v.(type) {
		case string:
			if col.Name != nil {
				t = col.Name(t)
			}
			line = appendFieldSep(line, i, cellsafe.Text(cellsafe.Visible(t)), sep)
		case nil:
			empty := col.Empty
			// A number or time column stays one: where the workbook says in words why a
			// value is missing, the CSV leaves it blank (words import as text and stop the
			// column's sums, in a spreadsheet and in pandas alike).
			if c.digits[i] != noDigits || col.Kind == value.KindDate || col.Kind == value.KindTime || col.Kind == value.KindWall {
				empty = ""
			}
			line = appendFieldSep(line, i, empty, sep)
		default:
			if i > 0 {
				line = append(line, sep)
			}
			start := len(line)
			if t, ok := v.(time.Time); ok && c.d.plain && col.Kind != value.KindDate {
				if col.Kind != value.KindWall {
					t = t.In(c.loc)
				}
				line = t.AppendFormat(line, "2006-01-02 15:04:05")
			} else {
				line = appendDisplay(line, v, c.digits[i], col.Format == "percent", col.Kind, c.loc)
				if c.d.decimal != '.' && c.digits[i] != noDigits {
					for k := start; k < len(line); k++ {
						if line[k] == '.' {
							line[k] = c.d.decimal
						}
					}
				}
			}
			if needsQuotes(line[start:], sep) {
				// Numbers and dates never do; quoted as any text would be if one did.
				field := string(line[start:])
				line = appendFieldSep(line[:start-min(i, 1)], i, field, sep)
			}
		}
	}
	line = append(line, "\r\n"...)
	c.line = line
	_, err := c.buf.Write(line)
	return err
}

// AppendField appends field, the i-th of its row, as encoding/csv's Writer with UseCRLF
// writes it: quoted when it holds a quote, comma, CR or LF, is \. or starts with a space; in
// quotes, a quote doubled, CR dropped and LF written as CRLF.
func AppendField(dst []byte, i int, field string) []byte {
	return appendFieldSep(dst, i, field, ',')
}

// appendFieldSep is AppendField with another separator, quoting where it appears too.
func appendFieldSep(dst []byte, i int, field string, sep byte) []byte {
	if i > 0 {
		dst = append(dst, sep)
	}
	if !needsQuotes([]byte(field), sep) {
		return append(dst, field...)
	}
	dst = append(dst, '"')
	for k := 0; k < len(field); k++ {
		switch b := field[k]; b {
		case '"':
			dst = append(dst, '"', '"')
		case '\r':
		case '\n':
			dst = append(dst, '\r', '\n')
		default:
			dst = append(dst, b)
		}
	}
	return append(dst, '"')
}

// needsQuotes is encoding/csv's fieldNeedsQuotes with sep as separator.
func needsQuotes(field []byte, sep byte) bool {
	if len(field) == 0 {
		return false
	}
	if string(field) == `\.` {
		return true
	}
	for _, b := range field {
		if csvSpecial[b] || b == sep {
			return true
		}
	}
	if c := field[0]; c < utf8.RuneSelf {
		return asciiSpace[c]
	}
	r1, _ := utf8.DecodeRune(field)
	return unicode.IsSpace(r1)
}

// csvSpecial are the bytes that make a field quoted wherever they are; asciiSpace the ASCII
// characters unicode.IsSpace calls space, which make it quoted when they lead.
var csvSpecial, asciiSpace = func() (special, space [256]bool) {
	for _, c := range []byte{'\n', '\r', '"', ','} {
		special[c] = true
	}
	for c := range utf8.RuneSelf {
		space[c] = unicode.IsSpace(rune(c))
	}
	return special, space
}()

// Display is a number rounded as its cell shows it (a percentage as
// percent to one decimal); other values as Value writes them.
func Display(v any, format string, k value.Kind, loc *time.Location) string {
	d, ok := displayDigits[format]
	if !ok {
		d = noDigits
	}
	return string(appendDisplay(nil, v, d, format == "percent", k, loc))
}

// appendDisplay appends Display's text; d is the format's displayDigits, noDigits for a
// format without.
func appendDisplay(dst []byte, v any, d int, percent bool, k value.Kind, loc *time.Location) []byte {
	if d == noDigits {
		return appendValue(dst, v, k, loc)
	}
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case value.Decimal:
		if d < 0 {
			return append(dst, x.String()...)
		}
	case float64, bool:
	default:
		return appendValue(dst, v, k, loc)
	}
	f := value.Number(v)
	if percent {
		f *= 100
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst
	}
	if d >= 0 {
		// a whole number shows no decimals to round: its digits, then d zeros
		if i, ok := value.WholeNumber(f); ok {
			dst = strconv.AppendInt(dst, i, 10)
			if d > 0 {
				dst = append(dst, '.')
				for range d {
					dst = append(dst, '0')
				}
			}
			return dst
		}
	}
	return strconv.AppendFloat(dst, f, 'f', d, 64)
}

// displayDigits are the decimals each numeric format shows (-1: as stored).
var displayDigits = map[string]int{"money": 0, "int": 0, "credit": -1, "decimal1": 1, "decimal2": 2, "rating": 2, "percent": 1}

// Value is v as CSV text: dates as 2006-01-02, instants as RFC 3339 in the
// report's time zone, decimals and floats in plain notation.
func Value(v any, k value.Kind, loc *time.Location) string {
	return string(appendValue(nil, v, k, loc))
}

func appendValue(dst []byte, v any, k value.Kind, loc *time.Location) []byte {
	switch x := v.(type) {
	case string:
		return append(dst, x...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		return strconv.AppendFloat(dst, x, 'f', -1, 64)
	case value.Decimal:
		return append(dst, x.String()...)
	case bool:
		return strconv.AppendBool(dst, x)
	case time.Time:
		switch k {
		case value.KindDate:
			return appendDate(dst, x.UTC())
		case value.KindWall:
			return x.UTC().AppendFormat(dst, "2006-01-02T15:04:05.999999999")
		}
		return x.In(loc).AppendFormat(dst, time.RFC3339Nano)
	}
	return dst
}

// appendDate is t.AppendFormat(dst, time.DateOnly) without reading the layout for every value.
func appendDate(dst []byte, t time.Time) []byte {
	y, m, d := t.Date()
	if y < 1000 || y > 9999 {
		return t.AppendFormat(dst, time.DateOnly)
	}
	return append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(m)/10), byte('0'+int(m)%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// Flush writes what is buffered.
func (c *Writer) Flush() error { return c.buf.Flush() }

// Numeric says whether a column format is a number's, rounded as its cell shows it.
func Numeric(format string) bool {
	_, ok := displayDigits[format]
	return ok
}
