package sandbox

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// toy is a record of a collection declared only in this test, so the declaration machinery is
// tested on a collection that no code outside its declaration knows.
type toy struct {
	id                   ID
	createdAt, updatedAt int64
	n                    int64
}

func (r *toy) key() (int64, ID) { return r.createdAt, r.id }
func (r *toy) changedAt() int64 { return r.updatedAt }

func (e *enc) toy(r *toy) {
	e.open()
	e.k("id")
	e.id(r.id)
	e.k("createdAt")
	e.int(r.createdAt)
	e.k("updatedAt")
	e.int(r.updatedAt)
	e.k("n")
	e.int(r.n)
	e.close()
}

var toys = &table[*toy]{
	name:  "toys",
	item:  (*enc).toy,
	pages: []pages[*toy]{{path: "/hl/v1/toy", totalKey: "total"}},
	gen: func(w *world, at int64) *toy {
		// every tenth changes long after it was made, so the updated order differs from the newest
		upd := at + w.rng.Int64N(1000)
		if w.rng.IntN(10) == 0 {
			upd = w.between(at, w.now)
		}
		return &toy{id: w.newID(), createdAt: at, updatedAt: upd, n: w.rng.Int64N(1000)}
	},
	base: 1000, least: 5, perDay: 40,
}

// withToys declares the toy collection for the rest of the test.
func withToys(t *testing.T) {
	saved := collections
	collections = append(slices.Clone(collections), toys.collection())
	t.Cleanup(func() { collections = saved })
}

// everything is the simulator's whole observable state but the toys: each collection's Dump and
// the first page of each list, under the server's order.
func everything(t *testing.T, s *Server) [][]byte {
	var out [][]byte
	for _, c := range Collections {
		for _, raw := range s.Dump(c) {
			out = append(out, raw)
		}
	}
	for _, p := range listBytesPaths() {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("http://sandbox.test%s%spageSize=100", p, sepFor(p)), nil)
		req.Header.Set("Authorization", "Bearer "+DefaultKey)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		out = append(out, rec.Body.Bytes())
	}
	return out
}

// TestDeclaredCollection: a collection declared in one table entry, with its record type, its
// encoding and its generator, is seeded at the scale, served as a paged list under every list
// order, evolves, takes the list faults, and moves no byte of any other collection.
func TestDeclaredCollection(t *testing.T) {
	opts := Options{Seed: 5, Scale: 0.1, Now: testNow}
	for _, order := range ListOrders {
		t.Run(string(order), func(t *testing.T) {
			opts.ListOrder = order
			plain, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			withToys(t)
			s, ts := newTest(t, opts)
			if n := len(s.Dump("toys")); n != 100 {
				t.Fatalf("%d toys at scale 0.1, want 100", n)
			}
			if !slices.EqualFunc(everything(t, plain), everything(t, s), bytes.Equal) {
				t.Fatal("declaring a collection changed another collection's bytes")
			}

			getter := func(p string) map[string]any { return mustOK(t, get(t, ts, p)) }
			got := pageAll(t, getter, "/hl/v1/toy", 7, "total")
			var want []*toy
			s.mu.RLock()
			rows := toys.rows(s.w)
			for i := range rows.len() {
				want = append(want, rows.desc(i))
			}
			s.mu.RUnlock()
			reorder(want, order, opts.Seed)
			wantIDs := make([]string, len(want))
			for i, r := range want {
				wantIDs[i] = r.id.String()
			}
			if !slices.Equal(got, wantIDs) {
				t.Fatalf("paged %d toys, want %d in %s order", len(got), len(wantIDs), order)
			}
			if order == OrderUpdated && slices.Equal(got, idsOf(dumped(t, s, "toys"))) {
				t.Fatal("the updated order is the newest order: the test proves nothing")
			}

			plain.Advance(72 * time.Hour)
			s.Advance(72 * time.Hour)
			if n := len(s.Dump("toys")); n != 100+12 {
				t.Errorf("%d toys after 3 days at 40 a day and scale 0.1, want 112", n)
			}
			if !slices.EqualFunc(everything(t, plain), everything(t, s), bytes.Equal) {
				t.Fatal("the toys' evolution changed another collection's bytes")
			}

			s.FailNext(FaultInsertWhilePaging, 1, "/hl/v1/toy")
			mustOK(t, get(t, ts, "/hl/v1/toy?page=2"))
			if n := len(s.Dump("toys")); n != 113 {
				t.Errorf("%d toys after insert_while_paging, want 113", n)
			}
			s.FailNext(FaultEndlessList, 1, "/hl/v1/toy")
			m := mustOK(t, get(t, ts, "/hl/v1/toy?page=50&pageSize=10"))
			known := idsOf(dumped(t, s, "toys"))
			if m["hasMore"] != true || len(items(m)) == 0 {
				t.Errorf("endless_list page 50: hasMore %v, %d items", m["hasMore"], len(items(m)))
			}
			for _, id := range idsOf(items(m)) {
				if slices.Contains(known, id) {
					t.Errorf("endless_list page 50 shows the known id %s, want new ids", id)
				}
			}
			s.FailNext(FaultStringNumbers, 1, "/hl/v1/toy")
			if m := mustOK(t, get(t, ts, "/hl/v1/toy")); m["total"] != "113" {
				t.Errorf("string_numbers: total %#v", m["total"])
			}
		})
	}
}

func idsOf(ms []map[string]any) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = str(m["id"])
	}
	return out
}
