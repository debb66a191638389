package sandbox

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// ListOrder is the order in which the paged /hl/v1 lists return records. The
// spec does not say; the real service's own examples are in no createdAt order,
// so clients are tested under each.
type ListOrder string

// List orders.
const (
	OrderNewest  ListOrder = "newest"  // createdAt desc, then id desc (the default)
	OrderUpdated ListOrder = "updated" // last change desc (updatedAt where the record has one, else createdAt), then newest first
	OrderShuffle ListOrder = "shuffle" // a stable pseudo-random order keyed by Seed and each record's id
)

// ListOrderEnv names the environment variable that sets the order of a Server whose Options
// leave it empty: `BILLSYNC_TEST_LIST_ORDER=shuffle go test ./internal/fetch/` runs a suite whole
// under another order (make test runs the end-to-end suites under each).
const ListOrderEnv = "BILLSYNC_TEST_LIST_ORDER"

// ListOrders are the valid orders, default first.
var ListOrders = []ListOrder{OrderNewest, OrderUpdated, OrderShuffle}

// ParseListOrder reads an order name; "" is the default (newest).
func ParseListOrder(s string) (ListOrder, error) {
	if s == "" {
		return OrderNewest, nil
	}
	o := ListOrder(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(ListOrders, o) {
		return "", fmt.Errorf("sandbox: list order %q is not one of newest, updated, shuffle", s)
	}
	return o, nil
}

// SetListOrder changes the order of every paged list from the next request on.
func (s *Server) SetListOrder(o ListOrder) error {
	o, err := ParseListOrder(string(o))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.opts.ListOrder = o
	s.gen++
	s.mu.Unlock()
	return nil
}

// ListOrder is the current order of the paged lists.
func (s *Server) ListOrder() ListOrder {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.opts.ListOrder
}

// changer is a record that changes after it is created; others last changed when created.
type changer interface{ changedAt() int64 }

// changedAt is when a record last changed, for OrderUpdated.
func changedAt(v keyed) int64 {
	if r, ok := v.(changer); ok {
		return r.changedAt()
	}
	t, _ := v.key()
	return t
}

// shuffleKey places a record in OrderShuffle: a hash of the seed and its id,
// so the order is stable while paging and a new record lands anywhere.
func shuffleKey(seed int64, v keyed) uint64 {
	_, id := v.key()
	h := splitmix(uint64(seed) ^ binary.LittleEndian.Uint64(id[:8]))
	return splitmix(h ^ binary.LittleEndian.Uint64(id[8:]))
}

// reorder sorts all (newest first on entry) into order o, in place.
func reorder[T keyed](all []T, o ListOrder, seed int64) {
	switch o {
	case OrderUpdated:
		slices.SortStableFunc(all, func(a, b T) int { return cmp.Compare(changedAt(b), changedAt(a)) })
	case OrderShuffle:
		slices.SortFunc(all, func(a, b T) int {
			if c := cmp.Compare(shuffleKey(seed, a), shuffleKey(seed, b)); c != 0 {
				return c
			}
			_, ia := a.key()
			_, ib := b.key()
			return bytes.Compare(ia[:], ib[:])
		})
	}
}
