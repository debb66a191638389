package syncrun

import (
	"context"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/syncdata"
	"github.com/billsync/billsync/internal/warehouse"
	"time"
)

// sink is the build's sink as fetch writes to it: the warehouse's lists and batches are
// concrete types, fetch's interfaces.
type sink struct{ *warehouse.Sink }

var _ fetch.Sink = sink{}

func (s sink) List(e string) (fetch.ListSink, error) {
	li, err := s.Sink.List(warehouse.Entity(e))
	if err != nil {
		return nil, err
	}
	return li, nil
}

func (s sink) Batch(e string) fetch.BatchSink { return s.Sink.Batch(warehouse.Entity(e)) }

func (s sink) Merged(e string) syncdata.MergeResult { return s.Sink.Merged(warehouse.Entity(e)) }

func (s sink) DetailTargets(ctx context.Context, e string) ([]string, error) {
	return s.Sink.DetailTargets(ctx, warehouse.Entity(e))
}

func (s sink) NewestCreated(ctx context.Context, e string) (time.Time, bool, error) {
	return s.Sink.NewestCreated(ctx, warehouse.Entity(e))
}
