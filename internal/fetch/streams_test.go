package fetch_test

import (
	"testing"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/fetch"
)

// Every declared entity is read by exactly one stream named like it, a detail's marked so: the
// lists, the cursor read, the fan-out and the details all follow from their declarations
// (entity.Decl's Paging, Paths and Parent), so a declaration fetch does not read fails here.
func TestEveryDeclarationHasItsStream(t *testing.T) {
	streams := map[string]fetch.Stream{}
	for _, s := range fetch.Streams() {
		if _, dup := streams[s.Name]; dup {
			t.Errorf("stream %s twice", s.Name)
		}
		streams[s.Name] = s
	}
	for _, d := range entity.All() {
		s, ok := streams[string(d.Name)]
		if !ok || s.Entity != d.Name || s.Detail != (d.Paging == entity.Detail) {
			t.Errorf("%s (paging %s): stream %+v (found %v)", d.Name, d.Paging, s, ok)
		}
		delete(streams, string(d.Name))
	}
	for name := range streams {
		t.Errorf("stream %s reads no declared entity", name)
	}
}
