package warehouse

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
)

// TestEveryEntityTracksItsChanges is the warehouse's part of the conformance suite over every
// declared entity (internal/report's TestEveryEntityConforms runs the rest against the simulator):
// its fixture merges, and a later read changing each change-tracked column puts that change in
// record_changes, under the table's name.
func TestEveryEntityTracksItsChanges(t *testing.T) {
	for _, d := range entity.All() {
		if d.Rule == entity.FillDetail || len(d.Changes) == 0 {
			continue
		}
		t.Run(string(d.Name), func(t *testing.T) {
			b := startBuild(t, newPath(t))
			items := fixtureItems(t, d.Fixture)
			r1 := startRun(t, b, "acct")
			if res := load(t, b, d.Name, r1, t0, false, items...); res.Inserted == 0 {
				t.Fatalf("merged: %+v", res)
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(items[0]), &rec); err != nil {
				t.Fatal(err)
			}
			for _, col := range d.Changes {
				f, _ := d.Field(col)
				if len(f.JSON) == 0 || strings.Contains(f.JSON[0], ".") {
					t.Fatalf("changed: %s is computed by hand; give this test its change", col)
				}
				rec[f.JSON[0]] = changedValue(f)
			}
			changed, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			r2 := startRun(t, b, "acct")
			load(t, b, d.Name, r2, t0.Add(time.Hour), false, append([]string{string(changed)}, items[1:]...)...)
			for _, col := range d.Changes {
				if n := queryInt(t, b.DB(), `SELECT count(*) FROM record_changes WHERE entity = ? AND field = ? AND run_id = ?`, d.TableName(), col, r2.ID); n != 1 {
					t.Errorf("changed: %d changes of %s.%s, want 1", n, d.TableName(), col)
				}
			}
		})
	}
}

// changedValue is a value of f's type no fixture holds.
func changedValue(f entity.Field) any {
	switch f.Type {
	case entity.Int:
		return 987654
	case entity.Number, entity.Decimal:
		return 1.25
	case entity.Time:
		return int64(1785000000000) // 2026-07-25, plausible and ahead of every fixture
	default:
		return "billsync-changed"
	}
}
