package report

import (
	"math/big"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
)

// TestDecimalValue: the float64 and the exact value are the driver's, on the
// fast path (whole numbers) and off it.
func TestDecimalValue(t *testing.T) {
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	cases := []duckdb.Decimal{
		{Width: 18, Scale: 2, Value: big.NewInt(123400)},
		{Width: 18, Scale: 2, Value: big.NewInt(-123456)},
		{Width: 18, Scale: 0, Value: big.NewInt(1 << 53)},
		{Width: 18, Scale: 0, Value: big.NewInt(1<<53 + 1)},
		{Width: 18, Scale: 3, Value: big.NewInt(1)},
		{Width: 18, Scale: 18, Value: big.NewInt(999999999999999999)},
		{Width: 38, Scale: 4, Value: huge},
		{Width: 38, Scale: 20, Value: big.NewInt(5)},
		{Width: 18, Scale: 0, Value: big.NewInt(0)},
	}
	for _, d := range cases {
		v := normalize(d, kindDecimal).(decimalValue)
		if got, want := v.Float64(), d.Float64(); got != want {
			t.Errorf("%s: Float64 %v, want %v", d.String(), got, want)
		}
		want, _ := new(big.Rat).SetString(d.String())
		if got := v.rat(new(big.Rat)); got.Cmp(want) != 0 {
			t.Errorf("%s: rat %v, want %v", d.String(), got, want)
		}
		if v.String() != d.String() {
			t.Errorf("String %s, want %s", v.String(), d.String())
		}
	}
}

// TestTotalsDecimalExact: a column's DECIMALs sum exactly across int64
// overflow, a change of scale and values beyond int64, read between adds too.
func TestTotalsDecimalExact(t *testing.T) {
	huge, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	const maxInt = 1<<63 - 1
	vals := []duckdb.Decimal{
		{Width: 38, Scale: 4, Value: big.NewInt(12345)},
		{Width: 38, Scale: 2, Value: big.NewInt(-7)}, // another scale
		{Width: 38, Scale: 4, Value: big.NewInt(maxInt)},
		{Width: 38, Scale: 4, Value: big.NewInt(maxInt)}, // overflows int64
		{Width: 38, Scale: 4, Value: big.NewInt(-maxInt)},
		{Width: 38, Scale: 4, Value: huge},
		{Width: 38, Scale: 4, Value: big.NewInt(-1)},
	}
	cols := []column{{name: "x", kind: kindDecimal, total: Total{Sum: true}}}
	tot := newTotals(cols)
	want := new(big.Rat)
	for k, d := range vals {
		tot.add([]any{normalize(d, kindDecimal)})
		r, _ := new(big.Rat).SetString(d.String())
		want.Add(want, r)
		if k == 3 { // a read in between folds the pending sum
			tot.sum(0)
		}
	}
	if got := tot.sum(0); got.Cmp(want) != 0 {
		t.Errorf("sum %s, want %s", got.RatString(), want.RatString())
	}
	if got, _ := tot.value(cols[0]); got != func() float64 { f, _ := want.Float64(); return f }() {
		t.Errorf("total %v, want %s", got, want.FloatString(4))
	}
}
