package report

import (
	"math/big"
	"unicode/utf8"
)

// column is a result column with how it is shown.
type column struct {
	name, title, format string
	width               float64
	kind                kind
	total               Total
}

// resolveColumns pairs the query's columns with the sheet's definition (nil
// for ad-hoc queries); vals fill {placeholders} in titles.
func resolveColumns(s *Sheet, res result, vals map[string]string) []column {
	cols := make([]column, len(res.names))
	for i, name := range res.names {
		c := column{name: name, title: name, kind: res.kinds[i], format: defaultFormat(res.kinds[i])}
		if s != nil {
			if d := s.column(name); d != nil {
				c.title = expand(d.Title, vals)
				if d.Format != "" {
					c.format = d.Format
				}
				c.width, c.total = d.Width, d.Total
			}
		}
		if c.width == 0 {
			c.width = defaultWidth(c)
		}
		cols[i] = c
	}
	return cols
}

func defaultFormat(k kind) string {
	switch k {
	case kindInt:
		return "int"
	case kindDecimal:
		return "credit"
	case kindDate:
		return "date"
	case kindTime:
		return "datetime"
	}
	return "text"
}

func defaultWidth(c column) float64 {
	w := map[string]float64{"date": 12, "month": 10, "datetime": 17, "money": 17, "credit": 14, "int": 10,
		"percent": 10, "decimal1": 10, "rating": 9}[c.format]
	if w == 0 {
		w = 14
	}
	// Headers wrap, so a long title needs only about half its length.
	if t := float64(utf8.RuneCountInString(c.title))/2 + 2; t > w {
		w = t
	}
	return w
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
}

func newTotals(cols []column) *totals {
	t := &totals{cols: cols, index: map[string]int{}, ints: make([]int64, len(cols)),
		rats: make([]*big.Rat, len(cols)), floats: make([]float64, len(cols)),
		weighted: make([]float64, len(cols)), weightOf: make([]int, len(cols))}
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
	for i, v := range vals {
		switch x := v.(type) {
		case int64:
			t.ints[i] += x
		case float64:
			t.floats[i] += x
		case decimal:
			if _, ok := t.tmp.SetString(x.String()); ok {
				t.rats[i].Add(t.rats[i], &t.tmp)
			}
		}
		if w := t.weightOf[i]; w >= 0 {
			t.weighted[i] += number(v) * number(vals[w])
		}
	}
}

// number is a numeric value as float64 (0 for anything else).
func number(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case decimal:
		return x.Float64()
	}
	return 0
}

// sum is column i's total as an exact rational.
func (t *totals) sum(i int) *big.Rat {
	r := new(big.Rat).Add(t.rats[i], new(big.Rat).SetInt64(t.ints[i]))
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
		case kindInt:
			return t.ints[i], true
		case kindDecimal:
			f, _ := t.rats[i].Float64()
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
}

func (c checkResult) verdict() string {
	if c.ok {
		return "OK"
	}
	return "MISMATCH"
}

func (t *totals) check(c *Check) checkResult {
	d := new(big.Rat)
	for _, n := range c.Sum {
		d.Add(d, t.sum(t.index[n]))
	}
	for _, n := range c.Minus {
		d.Sub(d, t.sum(t.index[n]))
	}
	d.Sub(d, t.sum(t.index[c.Equals]))
	f, _ := d.Float64()
	return checkResult{label: c.Label, column: c.Equals, diff: f, ok: d.Sign() == 0}
}
