// Package value is what a report query's columns hand over, as the writers (workbook, CSV,
// terminal table) see it: the kind of a column from its DuckDB type, and each value normalized
// to one of a few Go types. It knows nothing of reports or files.
package value

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// Kind is how a result column's values are handled when written out.
type Kind int

const (
	KindText Kind = iota
	KindInt
	KindFloat
	KindDecimal
	KindDate
	KindTime // an instant (TIMESTAMPTZ): shown as the wall clock of the report's zone
	KindBool
	// KindWall is a wall-clock time without a zone (TIMESTAMP): shown as it stands. It is not
	// an instant, so it is never moved into the report's zone (a query's local_time() or an
	// analyst's TIMESTAMP '2026-11-27 00:00:00' would otherwise gain seven hours).
	KindWall
)

// KindOf is the kind of a column of DuckDB type dbType.
func KindOf(dbType string) Kind {
	switch t := strings.ToUpper(dbType); {
	case strings.HasPrefix(t, "DECIMAL"):
		return KindDecimal
	case strings.HasSuffix(t, "INT") || t == "BIGINT" || t == "INTEGER" || t == "HUGEINT" || t == "UHUGEINT":
		return KindInt
	case t == "DOUBLE" || t == "FLOAT" || t == "REAL":
		return KindFloat
	case t == "DATE":
		return KindDate
	case t == "TIMESTAMP" || t == "TIMESTAMP_S" || t == "TIMESTAMP_MS" || t == "TIMESTAMP_NS":
		return KindWall
	case strings.HasPrefix(t, "TIMESTAMP"):
		return KindTime
	case t == "BOOLEAN":
		return KindBool
	}
	return KindText
}

// Decimal is what the driver returns for DECIMAL columns, matched by method set.
type Decimal interface {
	Float64() float64
	String() string
}

// Normalize turns a scanned value into int64, float64, Decimal, time.Time,
// bool, string or nil, the only types the writers handle.
func Normalize(v any, k Kind) any {
	switch x := v.(type) {
	case duckdb.Decimal:
		return NewDecimal(x)
	case nil, int64, float64, string, time.Time, bool, Decimal:
		return v
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint64:
		return int64(x)
	case uint32:
		return int64(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	case duckdb.Interval:
		return FormatInterval(x)
	}
	return fmt.Sprint(v)
}

// DuckDecimal is a DECIMAL from the driver with its float64 worked out once:
// the xlsx cell, the CSV and the totals each want it, and the driver's
// Float64 divides big.Floats.
type DuckDecimal struct {
	duckdb.Decimal
	f float64
}

// NewDecimal is d with its float64.
func NewDecimal(d duckdb.Decimal) DuckDecimal {
	if d.Value != nil && d.Value.IsInt64() && int(d.Scale) < len(Pow10) {
		// A whole number below 2^53 is exact either way: the same float64 as the driver's.
		v, p := d.Value.Int64(), Pow10[d.Scale]
		if q := v / p; v%p == 0 && q <= 1<<53 && q >= -(1<<53) {
			return DuckDecimal{d, float64(q)}
		}
	}
	return DuckDecimal{d, d.Float64()}
}

func (d DuckDecimal) Float64() float64 { return d.f }

// Rat sets r to the exact value.
func (d DuckDecimal) Rat(r *big.Rat) *big.Rat {
	if d.Value.IsInt64() && int(d.Scale) < len(Pow10) {
		return r.SetFrac64(d.Value.Int64(), Pow10[d.Scale])
	}
	return r.SetFrac(d.Value, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
}

// Pow10 are the powers of ten an int64 holds.
var Pow10 = [...]int64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// FormatInterval writes an interval as DuckDB's own clients do: "1 month 9 days 22:58:23.451".
func FormatInterval(iv duckdb.Interval) string {
	var parts []string
	unit := func(n int64, one string) {
		if n == 0 {
			return
		}
		if n == 1 || n == -1 {
			parts = append(parts, fmt.Sprintf("%d %s", n, one))
			return
		}
		parts = append(parts, fmt.Sprintf("%d %ss", n, one))
	}
	unit(int64(iv.Months)/12, "year")
	unit(int64(iv.Months)%12, "month")
	unit(int64(iv.Days), "day")
	if us := iv.Micros; us != 0 || len(parts) == 0 {
		sign := ""
		if us < 0 {
			sign, us = "-", -us
		}
		clock := fmt.Sprintf("%s%02d:%02d:%02d", sign, us/3_600_000_000, us/60_000_000%60, us/1_000_000%60)
		if frac := us % 1_000_000; frac != 0 {
			clock += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
		}
		parts = append(parts, clock)
	}
	return strings.Join(parts, " ")
}

// Number is a numeric value as float64 (0 for anything else).
func Number(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case Decimal:
		return x.Float64()
	}
	return 0
}

// AppendFloat is strconv.AppendFloat(b, f, 'f', -1, 64): a whole number (every amount and date
// of the reports) as the integer it is, without the shortest-digits search.
func AppendFloat(b []byte, f float64) []byte {
	if i, ok := WholeNumber(f); ok {
		return strconv.AppendInt(b, i, 10)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// WholeNumber is f as an int64 when strconv would print it with no fraction and the same digits:
// whole, within ±2^53 (exact in a float64), and not negative zero (printed "-0").
func WholeNumber(f float64) (int64, bool) {
	i := int64(f)
	return i, float64(i) == f && i <= 1<<53 && i >= -(1<<53) && (i != 0 || !math.Signbit(f))
}
