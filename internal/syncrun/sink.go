package syncrun

import (
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/warehouse"
)

// sink is the build's sink as fetch writes to it: the warehouse's lists and batches are its
// concrete types, fetch's are interfaces.
type sink struct{ *warehouse.Sink }

var _ fetch.Sink = sink{}

func (s sink) List(e entity.Name) (fetch.ListSink, error) {
	li, err := s.Sink.List(e)
	if err != nil {
		return nil, err
	}
	return li, nil
}

func (s sink) Batch(e entity.Name) fetch.BatchSink { return s.Sink.Batch(e) }
