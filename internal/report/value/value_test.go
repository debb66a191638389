package value

import (
	"math"
	"math/big"
	"strconv"
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
		v := Normalize(d, KindDecimal).(DuckDecimal)
		if got, want := v.Float64(), d.Float64(); got != want {
			t.Errorf("%s: Float64 %v, want %v", d.String(), got, want)
		}
		want, _ := new(big.Rat).SetString(d.String())
		if got := v.Rat(new(big.Rat)); got.Cmp(want) != 0 {
			t.Errorf("%s: rat %v, want %v", d.String(), got, want)
		}
		if v.String() != d.String() {
			t.Errorf("String %s, want %s", v.String(), d.String())
		}
	}
}

// awkwardFloats are numbers around the whole-number shortcuts' edges: zero of both signs, the
// 2^53 bound and beyond, fractions, halves that round, the extremes, NaN and infinities.
var awkwardFloats = []float64{0, math.Copysign(0, -1), 1, -1, 46203, 150000, -5, 0.5, -0.5, 1.5, 2.5, 12.345, -12.345,
	1<<53 - 1, 1 << 53, 1<<53 + 2, -(1 << 53), -(1<<53 + 2), 1e15, 1e16, 1e20, 1e21, 1e300, -1e300, 123456789.125,
	math.MaxInt64, math.MinInt64, math.SmallestNonzeroFloat64, math.MaxFloat64, 0.1 + 0.2, 99.95, 46203.999988425923,
	math.NaN(), math.Inf(1), math.Inf(-1)}

// TestAppendFloatAsStrconv: the workbook's numbers are strconv's shortest 'f' digits for every
// value, whole or not.
func TestAppendFloatAsStrconv(t *testing.T) {
	for _, f := range awkwardFloats {
		if got, want := string(AppendFloat(nil, f)), strconv.FormatFloat(f, 'f', -1, 64); got != want {
			t.Errorf("AppendFloat(%v) = %q, want %q", f, got, want)
		}
	}
}
