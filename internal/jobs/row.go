package jobs

import (
	"fmt"
	"math"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// rowReader reads one data row through the kind's columns and collects its problems.
type rowReader struct {
	t    *table
	row  inputRow
	pos  map[string]int // canonical column -> index
	errs *InputErrors
	loc  *time.Location
	now  time.Time
	bad  bool
}

func (r *rowReader) fail(col, format string, args ...any) {
	r.bad = true
	c := ""
	if i, ok := r.pos[canonical(col)]; ok {
		c = colName(i) + " (" + r.t.header[i] + ")"
	} else if col != "" {
		c = col
	}
	*r.errs = append(*r.errs, &InputError{File: r.t.file, Sheet: r.t.sheet, Line: r.row.line, Column: c,
		Msg: fmt.Sprintf(format, args...)})
}

// has says whether the file has the column at all.
func (r *rowReader) has(col string) bool {
	_, ok := r.pos[canonical(col)]
	return ok
}

// get is the trimmed cell of a column, "" when absent.
func (r *rowReader) get(col string) string {
	i, ok := r.pos[canonical(col)]
	if !ok || i >= len(r.row.cells) {
		return ""
	}
	return strings.TrimSpace(r.row.cells[i])
}

// text is a required cell.
func (r *rowReader) text(col string) string {
	v := r.get(col)
	if v == "" {
		r.fail(col, "%s is required", col)
	}
	return v
}

// email is a required bare e-mail address.
func (r *rowReader) email(col string) string {
	v := r.text(col)
	if v == "" {
		return ""
	}
	if err := checkEmail(v); err != nil {
		r.fail(col, "%q is not an e-mail address: %v", v, err)
		return ""
	}
	return v
}

func checkEmail(v string) error {
	a, err := mail.ParseAddress(v)
	if err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "mail: "))
	}
	if a.Name != "" || a.Address != v {
		return fmt.Errorf("write the bare address only")
	}
	_, domain, _ := strings.Cut(v, "@")
	if !strings.Contains(domain, ".") || strings.HasSuffix(domain, ".") {
		return fmt.Errorf("domain %q has no dot", domain)
	}
	return nil
}

// number reads a cell as a number, which spreadsheets may store as 1e+06 or 150000.0.
func (r *rowReader) number(col string) (float64, bool) {
	v := r.text(col)
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		r.fail(col, "%q is not a number (write digits only, no thousands separators or currency)", v)
		return 0, false
	}
	return f, true
}

// posInt is a required whole number above zero, as its decimal text.
func (r *rowReader) posInt(col string) string {
	f, ok := r.number(col)
	switch {
	case !ok:
		return ""
	case f != math.Trunc(f):
		r.fail(col, "%s must be a whole number, got %s", col, r.get(col))
	case f <= 0:
		r.fail(col, "%s must be positive, got %s", col, r.get(col))
	case f > 1e15:
		r.fail(col, "%s %s is implausibly large", col, r.get(col))
	default:
		return strconv.FormatInt(int64(f), 10)
	}
	return ""
}

// posNumber is a required number above zero, as its shortest text.
func (r *rowReader) posNumber(col string) string {
	f, ok := r.number(col)
	switch {
	case !ok:
		return ""
	case f <= 0:
		r.fail(col, "%s must be positive, got %s", col, r.get(col))
	case f > 1e15:
		r.fail(col, "%s %s is implausibly large", col, r.get(col))
	default:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

// future is a required date-time after now, as RFC 3339 UTC. A bare date means the end of that day in
// the configured zone; a workbook may hold an Excel serial date.
func (r *rowReader) future(col string) string {
	v := r.text(col)
	if v == "" {
		return ""
	}
	t, err := parseTime(v, r.loc, r.t.xlsx)
	if err != nil {
		r.fail(col, "%q is not a date-time: write 2026-12-31 or 2026-12-31T17:00:00+07:00", v)
		return ""
	}
	if !t.After(r.now) {
		r.fail(col, "%s %s is not in the future", col, t.Format(time.RFC3339))
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func parseTime(v string, loc *time.Location, excel bool) (time.Time, error) {
	if excel {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			t, err := excelize.ExcelDateToTime(f, false)
			if err != nil {
				return time.Time{}, err
			}
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc)
			if f == math.Trunc(f) {
				t = endOfDay(t)
			}
			return t, nil
		}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	t, err := time.ParseInLocation(time.DateOnly, v, loc)
	if err != nil {
		return time.Time{}, err
	}
	return endOfDay(t), nil
}

func endOfDay(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 23, 59, 59, 0, t.Location())
}
