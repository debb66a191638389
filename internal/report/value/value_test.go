package value

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
