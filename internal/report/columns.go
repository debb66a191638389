package report

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/billsync/billsync/internal/report/value"
)

// column is a result column with how it is shown.
type column struct {
	name, title, format string
	width               float64 // most characters (0 = no cap); the content decides below it
	kind                value.Kind
	total               Total
	src                 int    // index of the column in the query's row
	codes               bool   // text values are codes shown by their friendly name
	empty               string // shown for NULL
	reference           bool   // an ID or URL: last, outside the print area
	apartKind           string // a customer's or product's name: "customer" or "product" (Column.TellApart)
	apartID             int    // index in the columns of the ID that tells the name apart
	offHeadline         bool   // a figure left off the summary's headline lines (Column.Headline)
	summary             string // the figure's label on the summary (Column.Summary, else the title)
	names               map[string]string
	// the code codeName was last asked for and its name: the workbook and the CSV ask for each
	// cell's in turn, and sorted rows often repeat one
	lastCode, lastName string
}

// codeName is l.codeName(code), remembered per column: a column holds few
// distinct codes and is written row by row.
func (c *column) codeName(code string, l *lang) string {
	if code == c.lastCode && c.lastName != "" {
		return c.lastName
	}
	n, ok := c.names[code]
	if !ok {
		n = l.codeName(code)
		if len(c.names) < 1000 {
			c.names[code] = n
		}
	}
	c.lastCode, c.lastName = code, n
	return n
}

// resolveColumns pairs the query's columns with the sheet's definition (nil
// for ad-hoc queries), in the definition's order with reference columns last;
// vals fill {placeholders} in titles. drop names columns left out (the
// account when the warehouse holds one).
func resolveColumns(s *Sheet, res result, vals map[string]string, locale string, drop ...string) []column {
	var cols, refs []column
	add := func(i int) {
		name := res.names[i]
		if slices.Contains(drop, name) {
			return
		}
		c := column{name: name, title: name, kind: res.kinds[i], format: defaultFormat(res.kinds[i]), src: i}
		if s != nil {
			if d := s.column(name); d != nil {
				c.title = expand(d.Title.In(locale), vals)
				c.summary = expand(d.Summary.In(locale), vals)
				if d.Format != "" {
					c.format = d.Format
				}
				c.width, c.total = d.Width, d.Total
				c.codes, c.empty, c.reference = d.Codes, expand(d.Empty.In(locale), vals), d.Reference
				c.apartKind = tellApartKinds[d.TellApart]
				c.offHeadline = d.Headline != nil && !*d.Headline
				if c.codes {
					c.names = map[string]string{}
				}
			}
		}
		if c.reference {
			refs = append(refs, c)
		} else {
			cols = append(cols, c)
		}
	}
	done := make([]bool, len(res.names))
	if s != nil {
		for _, d := range s.Columns {
			if i := slices.Index(res.names, d.Name); i >= 0 {
				add(i)
				done[i] = true
			}
		}
	}
	for i := range res.names {
		if !done[i] {
			add(i)
		}
	}
	cols = append(cols, refs...)
	for i, c := range cols {
		if c.apartKind == "" {
			continue
		}
		id := s.column(c.name).TellApart
		if cols[i].apartID = slices.IndexFunc(cols, func(o column) bool { return o.name == id }); cols[i].apartID < 0 {
			cols[i].apartKind = "" // the ID column is not in the result
		}
	}
	return cols
}

// pick fills view with the query row's values in the columns' order.
func pick(cols []column, row, view []any) {
	for i, c := range cols {
		view[i] = row[c.src]
	}
}

func defaultFormat(k value.Kind) string {
	switch k {
	case value.KindInt:
		return "int"
	case value.KindDecimal, value.KindFloat:
		return "decimal2"
	case value.KindDate:
		return "date"
	case value.KindTime, value.KindWall:
		return "datetime"
	}
	return "text"
}

// totals accumulates the sums of every numeric column of a sheet, exactly for
// integers and decimals, plus the weighted sums that weighted averages need.
type totals struct {
	cols     []column
	index    map[string]int
	ints     []int64
	rats     []*big.Rat
	floats   []float64
	weighted []float64 // column value x weight column value
	weightOf []int     // index of the weight column, -1 if none
	tmp      big.Rat
	// A column's DECIMALs are summed as int64 units of 10^-scale while they
	// fit (a big.Rat addition per value was most of the totals' time), and
	// folded into rats on a change of scale, an overflow, or when read.
	dsum   []int64
	dscale []uint8
	dpend  []bool
	rows   int
	// rowCheck is the sheet's check evaluated on each row: +1 / -1 per column
	// index; rowsOff counts the rows where it is not 0.
	rowCheck map[int]float64
	rowsOff  int
	// excCol is the exceptions column (-1 = none), excCount its matching rows.
	excCol     int
	excValues  []string
	excChecked []string // values of checked rows; nil = every non-NULL value
	excCount   int
	excRows    int // rows that were checked
}

// watch makes t count the rows that fail the sheet's check and the sheet's
// exception rows.
func (t *totals) watch(s *Sheet) {
	if s == nil {
		return
	}
	if c := s.Check; c != nil {
		t.rowCheck = map[int]float64{}
		for _, n := range c.Sum {
			if i, ok := t.index[n]; ok {
				t.rowCheck[i]++
			}
		}
		for _, n := range c.Minus {
			if i, ok := t.index[n]; ok {
				t.rowCheck[i]--
			}
		}
		if i, ok := t.index[c.Equals]; ok {
			t.rowCheck[i]--
		}
	}
	if e := s.Exceptions; e != nil {
		if i, ok := t.index[e.Column]; ok {
			t.excCol, t.excValues, t.excChecked = i, e.Values, e.Checked
		}
	}
}

func newTotals(cols []column) *totals {
	t := &totals{cols: cols, index: map[string]int{}, ints: make([]int64, len(cols)),
		rats: make([]*big.Rat, len(cols)), floats: make([]float64, len(cols)),
		weighted: make([]float64, len(cols)), weightOf: make([]int, len(cols)), excCol: -1,
		dsum: make([]int64, len(cols)), dscale: make([]uint8, len(cols)), dpend: make([]bool, len(cols))}
	for i, c := range cols {
		t.index[c.name] = i
		t.rats[i] = new(big.Rat)
	}
	for i, c := range cols {
		t.weightOf[i] = -1
		if c.total.WeightedBy != "" {
			if w, ok := t.index[c.total.WeightedBy]; ok {
				t.weightOf[i] = w
			}
		}
	}
	return t
}

func (t *totals) add(vals []any) {
	t.rows++
	if t.rowCheck != nil {
		d := 0.0
		for i, sign := range t.rowCheck {
			d += sign * value.Number(vals[i])
		}
		if math.Abs(d) > 1e-6 {
			t.rowsOff++
		}
	}
	if t.excCol >= 0 {
		if v, ok := vals[t.excCol].(string); ok {
			if slices.Contains(t.excValues, v) {
				t.excCount++
			}
			if t.excChecked == nil || slices.Contains(t.excChecked, v) {
				t.excRows++
			}
		}
	}
	for i, v := range vals {
		switch x := v.(type) {
		case int64:
			t.ints[i] += x
		case float64:
			t.floats[i] += x
		case value.DuckDecimal:
			t.addDecimal(i, x)
		case value.Decimal:
			if _, ok := t.tmp.SetString(x.String()); ok {
				t.rats[i].Add(t.rats[i], &t.tmp)
			}
		}
		if w := t.weightOf[i]; w >= 0 {
			t.weighted[i] += value.Number(v) * value.Number(vals[w])
		}
	}
}

func (t *totals) addDecimal(i int, x value.DuckDecimal) {
	if x.Value.IsInt64() && int(x.Scale) < len(value.Pow10) && (!t.dpend[i] || t.dscale[i] == x.Scale) {
		v, sum := x.Value.Int64(), t.dsum[i]
		if s := sum + v; (v >= 0) == (s >= sum) { // no overflow
			t.dsum[i], t.dscale[i], t.dpend[i] = s, x.Scale, true
			return
		}
	}
	r := t.rat(i)
	r.Add(r, x.Rat(&t.tmp))
}

// rat is column i's DECIMALs' exact sum.
func (t *totals) rat(i int) *big.Rat {
	if t.dpend[i] {
		t.rats[i].Add(t.rats[i], t.tmp.SetFrac64(t.dsum[i], value.Pow10[t.dscale[i]]))
		t.dsum[i], t.dpend[i] = 0, false
	}
	return t.rats[i]
}

// sum is column i's total as an exact rational.
func (t *totals) sum(i int) *big.Rat {
	r := new(big.Rat).Add(t.rat(i), new(big.Rat).SetInt64(t.ints[i]))
	if t.floats[i] != 0 {
		r.Add(r, new(big.Rat).SetFloat64(t.floats[i]))
	}
	return r
}

// value is the totals-row value of c, if c has a total.
func (t *totals) value(c column) (any, bool) {
	i := t.index[c.name]
	switch {
	case c.total.Sum:
		switch c.kind {
		case value.KindInt:
			return t.ints[i], true
		case value.KindDecimal:
			f, _ := t.rat(i).Float64()
			return f, true
		}
		return t.floats[i], true
	case c.total.WeightedBy != "":
		w, _ := t.sum(t.index[c.total.WeightedBy]).Float64()
		if w == 0 {
			return nil, false
		}
		return t.weighted[i] / w, true
	case c.total.Ratio != "":
		num, _ := t.sum(t.index[c.total.Ratio]).Float64()
		var den float64
		for _, o := range c.total.Of {
			d, _ := t.sum(t.index[o]).Float64()
			den += d
		}
		if den == 0 {
			return nil, false
		}
		return num / den, true
	}
	return nil, false
}

// checkResult is the outcome of a sheet's reconciliation check.
type checkResult struct {
	label, column string
	diff          float64
	ok            bool
	rowsOff, rows int // rows where the check fails, rows checked
}

func (c checkResult) verdict(l *lang) string {
	if c.ok {
		return l.w("check_ok")
	}
	return l.w("check_bad")
}

// text is the check's outcome in words: verdict, difference of the totals and
// the count of rows that fail it.
func (c checkResult) text(l *lang) string {
	return fmt.Sprintf("%s: %s (%s %s; %s/%s %s)", c.label, c.verdict(l), l.w("difference"),
		l.figure(c.diff), l.count(c.rowsOff), l.count(c.rows), l.w("rows"))
}

func (t *totals) check(c *Check, l *lang) checkResult {
	d := new(big.Rat)
	for _, n := range c.Sum {
		d.Add(d, t.sum(t.index[n]))
	}
	for _, n := range c.Minus {
		d.Sub(d, t.sum(t.index[n]))
	}
	d.Sub(d, t.sum(t.index[c.Equals]))
	f, _ := d.Float64()
	return checkResult{label: c.Label.In(l.code), column: c.Equals, diff: f, ok: d.Sign() == 0 && t.rowsOff == 0,
		rowsOff: t.rowsOff, rows: t.rows}
}

// format is a value as its cell shows it, for text on the summary.
func (l *lang) format(v any, c column, currency string) string {
	if v == nil {
		return c.empty
	}
	f := value.Number(v)
	if f == 0 && (c.format == "money" || c.format == "credit") {
		return "-" // as the cell's format shows a zero
	}
	switch c.format {
	case "money":
		s := l.number(int64(math.Round(f)))
		if sym := strings.TrimSpace(strings.Trim(strings.SplitN(moneyFormat(currency), "#", 2)[0], `"`)); sym != "" {
			if f < 0 {
				return "-" + sym + " " + strings.TrimPrefix(s, "-")
			}
			return sym + " " + s
		}
		return s + " " + currency
	case "int", "credit":
		return l.number(int64(math.Round(f)))
	case "percent":
		return l.decimal(f*100, 1) + "%"
	case "decimal1":
		return l.decimal(f, 1)
	case "decimal2", "rating":
		return l.decimal(f, 2)
	}
	return fmt.Sprint(v)
}
