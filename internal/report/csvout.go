package report

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/report/value"
)

// csvSheet writes one sheet as RFC 4180 CSV: UTF-8 with a byte-order mark (so
// Excel on Windows reads names such as Ñoño right), CRLF, the workbook's
// headers in the report's locale, ISO 8601 dates and numbers as the workbook
// shows them, without thousands separators. Each row is built in one reused
// buffer, quoted as encoding/csv quotes (TestCSVFieldsAsEncodingCSV), without
// a string per value.
type csvSheet struct {
	file   *atomicFile
	buf    *bufio.Writer
	cols   []column
	digits []int // displayDigits of each column's format; noDigits when it has none
	loc    *time.Location
	l      *lang
	d      *csvDialect
	line   []byte
}

// csvDialect is how a CSV file writes what a spreadsheet must read back as numbers and dates.
type csvDialect struct {
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
	dialectRFC = &csvDialect{name: "rfc", sep: ',', decimal: '.'}
	dialectID  = &csvDialect{name: "id", sep: ';', decimal: ',', plain: true}
	// CSVDialects are the names -csv-dialect accepts.
	CSVDialects = []string{dialectRFC.name, dialectID.name}
)

// dialectOf is the dialect of a name; "" is rfc.
func dialectOf(name string) (*csvDialect, error) {
	switch name {
	case "", dialectRFC.name:
		return dialectRFC, nil
	case dialectID.name:
		return dialectID, nil
	}
	return nil, fmt.Errorf("CSV dialect %q: want %s", name, strings.Join(CSVDialects, " or "))
}

// CheckCSVDialect fails for a name that is not a CSV dialect.
func CheckCSVDialect(name string) error {
	_, err := dialectOf(name)
	return err
}

const bom = "\ufeff"

// noDigits marks a column whose format is not numeric (displayDigits has no entry).
const noDigits = -2

func newCSVSheet(path string, cols []column, loc *time.Location, l *lang, d *csvDialect) (*csvSheet, error) {
	f, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(f, 256<<10)
	buf.WriteString(bom)
	if d == nil {
		d = dialectRFC
	}
	c := &csvSheet{file: f, buf: buf, cols: cols, digits: make([]int, len(cols)), loc: loc, l: l, d: d}
	for i, col := range cols {
		c.digits[i] = noDigits
		if d, ok := displayDigits[col.format]; ok {
			c.digits[i] = d
		}
		c.line = appendCSVFieldSep(c.line, i, cellsafe.Text(col.title), d.sep)
	}
	c.line = append(c.line, "\r\n"...)
	if _, err := buf.Write(c.line); err != nil {
		f.abort()
		return nil, err
	}
	return c, nil
}

func (c *csvSheet) write(vals []any) error {
	line := c.line[:0]
	sep := c.d.sep
	for i, v := range vals {
		col := &c.cols[i]
		switch t := v.(type) {
		case string:
			if col.codes {
				t = col.codeName(t, c.l)
			}
			line = appendCSVFieldSep(line, i, cellsafe.Text(cellsafe.Visible(t)), sep)
		case nil:
			empty := col.empty
			// A number or time column stays one: where the workbook says in words why a
			// value is missing, the CSV leaves it blank (words import as text and stop the
			// column's sums, in a spreadsheet and in pandas alike).
			if c.digits[i] != noDigits || col.kind == value.KindDate || col.kind == value.KindTime || col.kind == value.KindWall {
				empty = ""
			}
			line = appendCSVFieldSep(line, i, empty, sep)
		default:
			if i > 0 {
				line = append(line, sep)
			}
			start := len(line)
			if t, ok := v.(time.Time); ok && c.d.plain && col.kind != value.KindDate {
				if col.kind != value.KindWall {
					t = t.In(c.loc)
				}
				line = t.AppendFormat(line, "2006-01-02 15:04:05")
			} else {
				line = appendDisplay(line, v, c.digits[i], col.format == "percent", col.kind, c.loc)
				if c.d.decimal != '.' && c.digits[i] != noDigits {
					for k := start; k < len(line); k++ {
						if line[k] == '.' {
							line[k] = c.d.decimal
						}
					}
				}
			}
			if csvNeedsQuotesSep(line[start:], sep) {
				// Numbers and dates never do; quoted as any text would be if one did.
				field := string(line[start:])
				line = appendCSVFieldSep(line[:start-min(i, 1)], i, field, sep)
			}
		}
	}
	line = append(line, "\r\n"...)
	c.line = line
	_, err := c.buf.Write(line)
	return err
}

// appendCSVField appends field, the i-th of its row, as encoding/csv's Writer with UseCRLF
// writes it: quoted when it holds a quote, comma, CR or LF, is \. or starts with a space; in
// quotes, a quote doubled, CR dropped and LF written as CRLF.
func appendCSVField(dst []byte, i int, field string) []byte {
	return appendCSVFieldSep(dst, i, field, ',')
}

// appendCSVFieldSep is appendCSVField with another separator, quoting where it appears too.
func appendCSVFieldSep(dst []byte, i int, field string, sep byte) []byte {
	if i > 0 {
		dst = append(dst, sep)
	}
	if !csvNeedsQuotesSep([]byte(field), sep) {
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

// csvNeedsQuotesSep is encoding/csv's fieldNeedsQuotes with sep as separator.
func csvNeedsQuotesSep(field []byte, sep byte) bool {
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

// displayNumber is a number rounded as its cell shows it (a percentage as
// percent to one decimal); other values as csvValue writes them.
func displayNumber(v any, format string, k value.Kind, loc *time.Location) string {
	d, ok := displayDigits[format]
	if !ok {
		d = noDigits
	}
	return string(appendDisplay(nil, v, d, format == "percent", k, loc))
}

// appendDisplay appends displayNumber's text; d is the format's displayDigits, noDigits for a
// format without.
func appendDisplay(dst []byte, v any, d int, percent bool, k value.Kind, loc *time.Location) []byte {
	if d == noDigits {
		return appendCSVValue(dst, v, k, loc)
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
		return appendCSVValue(dst, v, k, loc)
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

// csvValue is v as CSV text: dates as 2006-01-02, instants as RFC 3339 in the
// report's time zone, decimals and floats in plain notation.
func csvValue(v any, k value.Kind, loc *time.Location) string {
	return string(appendCSVValue(nil, v, k, loc))
}

func appendCSVValue(dst []byte, v any, k value.Kind, loc *time.Location) []byte {
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

func (c *csvSheet) finish() error {
	if err := c.buf.Flush(); err != nil {
		c.file.abort()
		return err
	}
	return c.file.commit()
}

func (c *csvSheet) abort() { c.file.abort() }
