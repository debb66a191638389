package report

import (
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/report/csvout"
	"github.com/billsync/billsync/internal/tablefile"
)

// csvSheet is one sheet's CSV file, written under a temporary name and put in place with the
// report's other files once every sheet ran.
type csvSheet struct {
	file *tablefile.File
	w    *csvout.Writer
}

// CheckCSVDialect fails for a name that is not a CSV dialect.
func CheckCSVDialect(name string) error {
	_, err := csvout.DialectOf(withDefaults(config.Report{CSVDialect: name}).CSVDialect)
	return err
}

func newCSVSheet(path string, cols []column, loc *time.Location, l *lang, d *csvout.Dialect) (*csvSheet, error) {
	f, err := tablefile.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := csvout.New(f, csvColumns(cols, l), loc, d)
	if err != nil {
		f.Abort()
		return nil, err
	}
	return &csvSheet{file: f, w: w}, nil
}

// csvColumns are the columns as the CSV writes them: codes by their friendly names in l.
func csvColumns(cols []column, l *lang) []csvout.Column {
	out := make([]csvout.Column, len(cols))
	for i := range cols {
		c := &cols[i]
		out[i] = csvout.Column{Title: c.title, Format: c.format, Kind: c.kind, Empty: c.empty}
		if c.codes {
			out[i].Name = func(code string) string { return c.codeName(code, l) }
		}
	}
	return out
}

func (c *csvSheet) write(vals []any) error { return c.w.Write(vals) }

func (c *csvSheet) finish() error {
	if err := c.w.Flush(); err != nil {
		c.file.Abort()
		return err
	}
	return c.file.Commit()
}

func (c *csvSheet) abort() { c.file.Abort() }
