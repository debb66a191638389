package syncrun_test

import (
	"slices"
	"testing"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/warehouse"
)

// Every list stream reads an entity the warehouse knows as a list (a declaration, a table), and
// every list entity of the warehouse is read by a stream: a list endpoint added on one side only
// fails here, not as an empty table in production.
func TestListsMatchTheWarehouse(t *testing.T) {
	lists := map[entity.Name]bool{}
	for _, e := range warehouse.ListEntities() {
		lists[e] = true
	}
	var streams []entity.Name
	for _, s := range fetch.Streams() {
		e := s.Entity
		if lists[e] {
			if s.Name != string(s.Entity) {
				t.Errorf("list stream %s writes %s: a list is named like its entity", s.Name, s.Entity)
			}
			streams = append(streams, e)
		}
	}
	slices.Sort(streams)
	if want := warehouse.ListEntities(); !slices.Equal(streams, want) {
		t.Errorf("fetch lists %v, warehouse list entities %v", streams, want)
	}
	if len(streams) < 6 {
		t.Errorf("only %d lists", len(streams))
	}
}
