package jobs

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// rowReader reads one data row through the kind's columns and collects its problems.
type rowReader struct {
	t     *table
	row   inputRow
	pos   map[string]int // canonical column -> index
	errs  *InputErrors
	loc   *time.Location
	now   time.Time
	units map[string]unit // what a column's numbers count (traits.units)
	lang  lang            // of the change texts
	bad   bool
}

func (r *rowReader) fail(col, format string, args ...any) {
	r.bad = true
	c := ""
	if i, ok := r.pos[canonical(col)]; ok {
		c = colName(i) + " (" + r.t.header[i] + ")"
	} else if col != "" {
		c = col
	}
	msg := fmt.Sprintf(format, args...)
	v := ""
	if col != "" {
		v = r.get(col)
	}
	if strings.Contains(msg, v) {
		v = "" // the message shows it already
	}
	*r.errs = append(*r.errs, &InputError{File: r.t.file, Sheet: r.t.sheet, Line: r.row.line, Column: c, Value: v, Msg: msg})
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

// maxAmount bounds amounts: more than a thousand trillion rupiah is a mistake, and float64 is exact below it.
const maxAmount = 1_000_000_000_000_000

var (
	digitsRe    = regexp.MustCompile(`^[0-9]+$`)
	groupedRe   = regexp.MustCompile(`^(?i:rp\.?\s*)?([0-9]{1,3}(?:[.,\s][0-9]{3})+)(?:,-|,00|\.00)?$`)
	separatorRe = regexp.MustCompile(`[^0-9]`)
)

// posInt is a required whole number above zero, as its decimal text. A text cell must be digits only: 150.000
// means 150000 to an Indonesian and 150 to a parser, so anything else is refused with what to write. A numeric
// xlsx cell holding a whole number is taken as it is (the spreadsheet has already read it); a TRUE/FALSE cell
// never is.
func (r *rowReader) posInt(col string) string {
	v := r.text(col)
	if v == "" {
		return ""
	}
	var n int64
	typ, typed := r.cellType(col)
	switch {
	case typed && typ == excelize.CellTypeBool:
		r.fail(col, "%s is a TRUE/FALSE cell, not an amount: write the amount in digits, e.g. 150000", col)
		return ""
	case typed && (typ == excelize.CellTypeNumber || typ == excelize.CellTypeUnset): // no type attribute: a number
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
			r.fail(col, "%s %s is not a whole number: %s", col, v, r.wholeHint(col))
			return ""
		}
		if f > maxAmount {
			r.fail(col, "%s %s is implausibly large", col, v)
			return ""
		}
		n = int64(f)
	default:
		if rest, neg := strings.CutPrefix(v, "-"); neg && digitsRe.MatchString(rest) {
			r.fail(col, "%s must be positive, got %s", col, v)
			return ""
		}
		if !digitsRe.MatchString(v) {
			r.fail(col, "%s %q is not a whole number in digits: %s", col, v, suggestAmount(v))
			return ""
		}
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n > maxAmount {
			r.fail(col, "%s %s is implausibly large", col, v)
			return ""
		}
	}
	if n <= 0 {
		r.fail(col, "%s must be positive, got %s", col, v)
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// whole is posInt as the number it is; 0 when the cell is refused.
func (r *rowReader) whole(col string) whole {
	n, _ := strconv.ParseInt(r.posInt(col), 10, 64)
	return whole(n)
}

// wholeHint says what a whole number of the column counts and what to write.
func (r *rowReader) wholeHint(col string) string {
	if h, ok := unitWords[r.units[col]]; ok {
		return h
	}
	return "write a whole number, e.g. 150000"
}

// suggestAmount says what to write instead of an amount that is not digits only.
func suggestAmount(v string) string {
	if m := groupedRe.FindStringSubmatch(strings.TrimSpace(v)); m != nil {
		return "write " + separatorRe.ReplaceAllString(m[1], "") + " (digits only: no thousands separators, decimals or currency)"
	}
	return "write digits only, e.g. 150000 (no thousands separators, decimals, signs or currency)"
}

// cellType is the xlsx type of a numeric-looking cell; false for CSV and for text that is not a number.
func (r *rowReader) cellType(col string) (excelize.CellType, bool) {
	i, ok := r.pos[canonical(col)]
	if !ok {
		return excelize.CellTypeUnset, false
	}
	t, ok := r.row.types[i]
	return t, ok
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
		r.fail(col, "%s %s is not in the future", col, t.In(r.loc).Format("2006-01-02 15:04:05 MST"))
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// instant is future as the time it is; zero when the cell is refused.
func (r *rowReader) instant(col string) instant {
	t, _ := time.Parse(time.RFC3339, r.future(col))
	return instant(t)
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

// localTime is a time of a request as the configured zone shows it, for a change text.
func (r *rowReader) localTime(t instant) string {
	if time.Time(t).IsZero() || r.loc == nil {
		return t.String()
	}
	return time.Time(t).In(r.loc).Format("2006-01-02 15:04:05 MST")
}

func endOfDay(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 23, 59, 59, 0, t.Location())
}

// whole is a whole number of a row (an amount, a count): the journal keeps its decimal text, "" for none.
type whole int64

func (n whole) String() string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(int64(n), 10)
}

func (n whole) MarshalJSON() ([]byte, error) { return json.Marshal(n.String()) }

func (n *whole) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*n = 0
	if s == "" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*n = whole(v)
	return nil
}

// instant is a row's date-time: the journal keeps it as RFC 3339 UTC with milliseconds, "" for none.
type instant time.Time

func (t instant) String() string {
	if time.Time(t).IsZero() {
		return ""
	}
	return time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z")
}

func (t instant) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

func (t *instant) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = instant{}
	if s == "" {
		return nil
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("%q is not a date-time", s)
	}
	*t = instant(v)
	return nil
}
