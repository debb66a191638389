package report

import (
	"bufio"
	"encoding/csv"
	"strconv"
	"time"
)

// csvSheet writes one sheet as RFC 4180 CSV: UTF-8, CRLF, a header row of the
// query's column names, ISO 8601 dates and plain numbers.
type csvSheet struct {
	file *atomicFile
	buf  *bufio.Writer
	w    *csv.Writer
	cols []column
	loc  *time.Location
	rec  []string
}

func newCSVSheet(path string, cols []column, loc *time.Location) (*csvSheet, error) {
	f, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(f, 256<<10)
	w := csv.NewWriter(buf)
	w.UseCRLF = true
	c := &csvSheet{file: f, buf: buf, w: w, cols: cols, loc: loc, rec: make([]string, len(cols))}
	for i, col := range cols {
		c.rec[i] = col.name
	}
	if err := w.Write(c.rec); err != nil {
		f.abort()
		return nil, err
	}
	return c, nil
}

func (c *csvSheet) write(vals []any) error {
	for i, v := range vals {
		c.rec[i] = csvValue(v, c.cols[i].kind, c.loc)
	}
	return c.w.Write(c.rec)
}

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
