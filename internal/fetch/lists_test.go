package fetch

import (
	"slices"
	"testing"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/warehouse"
)

// Every list stream reads an entity the warehouse knows as a list (a declaration, a table), and
// every list entity of the warehouse is read by a stream: a list endpoint added on one side only
// fails here, not as an empty table in production.
func TestListsMatchTheWarehouse(t *testing.T) {
	var streams []entity.Name
	for _, l := range lists {
		if len(l.paths) == 0 {
			t.Errorf("list %s has no path", l.stream)
		}
		streams = append(streams, l.entity())
	}
	slices.Sort(streams)
	if want := warehouse.ListEntities(); !slices.Equal(streams, want) {
		t.Errorf("fetch lists %v, warehouse list entities %v", streams, want)
	}
	if len(streams) < 6 {
		t.Errorf("only %d lists", len(streams))
	}
}
