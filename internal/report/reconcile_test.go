package report

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/report/value"
)

// TestCollectionsReconcileWithAging: the collections summary's reconciliation starts from the open
// amount of its Monthly sheet, ends at the aging report's outstanding total, and its lines add up,
// at dates before, between and after the syncs.
func TestCollectionsReconcileWithAging(t *testing.T) {
	w := testWorld(t)
	wib := time.FixedZone("WIB", 7*3600)
	sum := func(file, col string, vars map[string]string) int64 {
		names, rows := queryRows(t, w.db, file, vars, "")
		i := slices.Index(names, col)
		if i < 0 {
			t.Fatalf("%s has no column %s: %v", file, col, names)
		}
		var n int64
		for _, r := range rows {
			n += toInt(t, r[i])
		}
		return n
	}
	for _, d := range []time.Time{firstSync.AddDate(0, 0, -20), firstSync, secondSync, secondSync.AddDate(0, 2, 0)} {
		for _, months := range []string{"12", "2"} {
			vars := map[string]string{"as_of": d.In(wib).Format(time.DateOnly), "months": months}
			t.Run(fmt.Sprint(vars), func(t *testing.T) {
				names, rows := queryRows(t, w.db, "collections_vs_aging.sql", vars, "")
				line, amount := slices.Index(names, "line"), slices.Index(names, "amount")
				got := map[string]int64{}
				for _, r := range rows {
					got[r[line].(string)] += toInt(t, r[amount])
				}
				open, aging := sum("collections_monthly.sql", "open_amount", vars), sum("aging_by_customer.sql", "outstanding", vars)
				if got["recon_open_here"] != open {
					t.Errorf("reconciliation starts at %d, the Monthly sheet's open amount is %d", got["recon_open_here"], open)
				}
				if got["recon_aging"] != aging {
					t.Errorf("reconciliation ends at %d, aging's outstanding is %d", got["recon_aging"], aging)
				}
				if s := got["recon_open_here"] + got["recon_other_kinds"] + got["recon_before_window"] + got["recon_rest"]; s != got["recon_aging"] {
					t.Errorf("lines add up to %d, not %d: %v", s, got["recon_aging"], got)
				}
				if months == "12" && got["recon_rest"] != 0 {
					t.Errorf("an unexplained difference of %d on the test world: %v", got["recon_rest"], got)
				}
			})
		}
	}
}

func toInt(t *testing.T, v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case nil:
		return 0
	case value.Decimal:
		return int64(x.Float64())
	case float64:
		return int64(x)
	}
	t.Fatalf("not a number: %T %v", v, v)
	return 0
}
