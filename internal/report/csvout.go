package report

import (
	"bufio"
	"encoding/csv"
	"math"
	"strconv"
	"time"

	"github.com/billsync/billsync/internal/cellsafe"
)

// csvSheet writes one sheet as RFC 4180 CSV: UTF-8 with a byte-order mark (so
// Excel on Windows reads names such as Ñoño right), CRLF, the workbook's
// headers in the report's locale, ISO 8601 dates and numbers as the workbook
// shows them, without thousands separators.
type csvSheet struct {
	file *atomicFile
	buf  *bufio.Writer
	w    *csv.Writer
	cols []column
	loc  *time.Location
	l    *lang
	rec  []string
}

const bom = "\ufeff"

func newCSVSheet(path string, cols []column, loc *time.Location, l *lang) (*csvSheet, error) {
	f, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(f, 256<<10)
	buf.WriteString(bom)
	w := csv.NewWriter(buf)
	w.UseCRLF = true
	c := &csvSheet{file: f, buf: buf, w: w, cols: cols, loc: loc, l: l, rec: make([]string, len(cols))}
	for i, col := range cols {
		c.rec[i] = cellsafe.Text(col.title)
	}
	if err := w.Write(c.rec); err != nil {
		f.abort()
		return nil, err
	}
	return c, nil
}

func (c *csvSheet) write(vals []any) error {
	for i, v := range vals {
		col := &c.cols[i]
		switch t := v.(type) {
		case string:
			if col.codes {
				t = col.codeName(t, c.l)
			}
			c.rec[i] = cellsafe.Text(t)
		case nil:
			c.rec[i] = col.empty
		default:
			c.rec[i] = displayNumber(v, col.format, col.kind, c.loc)
		}
	}
	return c.w.Write(c.rec)
}

// displayNumber is a number rounded as its cell shows it (a percentage as
// percent to one decimal); other values as csvValue writes them.
func displayNumber(v any, format string, k kind, loc *time.Location) string {
	d, ok := displayDigits[format]
	if !ok {
		return csvValue(v, k, loc)
	}
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case decimal:
		if d < 0 {
			return x.String()
		}
	case float64, bool:
	default:
		return csvValue(v, k, loc)
	}
	f := number(v)
	if format == "percent" {
		f *= 100
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return strconv.FormatFloat(f, 'f', d, 64)
}

// displayDigits are the decimals each numeric format shows (-1: as stored).
var displayDigits = map[string]int{"money": 0, "int": 0, "credit": -1, "decimal1": 1, "decimal2": 2, "rating": 2, "percent": 1}

// csvValue is v as CSV text: dates as 2006-01-02, instants as RFC 3339 in the
// report's time zone, decimals and floats in plain notation.
func csvValue(v any, k kind, loc *time.Location) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case decimal:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if k == kindDate {
			return x.UTC().Format(time.DateOnly)
		}
		return x.In(loc).Format(time.RFC3339Nano)
	}
	return ""
}

func (c *csvSheet) finish() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		c.file.abort()
		return err
	}
	if err := c.buf.Flush(); err != nil {
		c.file.abort()
		return err
	}
	return c.file.commit()
}

func (c *csvSheet) abort() { c.file.abort() }
