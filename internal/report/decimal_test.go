package report

import (
	"math/big"
	"testing"

	"github.com/billsync/billsync/internal/report/value"
	"github.com/duckdb/duckdb-go/v2"
)

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
	cols := []column{{name: "x", kind: value.KindDecimal, total: Total{Sum: true}}}
	tot := newTotals(cols)
	want := new(big.Rat)
	for k, d := range vals {
		tot.add([]any{value.Normalize(d, value.KindDecimal)})
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
