package fetch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/syncdata"
)

// memSink is a fetch.Sink in memory: records by entity and id, the passes each list ended with,
// the streams, cursors and the run's end. A list pass is whole by the warehouse's rule (the count
// held still, as many distinct records as announced arrived, no conflict, no doubt) unless refuse
// says otherwise, so fetch's own decisions can be watched without DuckDB.
type memSink struct {
	mu       sync.Mutex
	account  string
	now      func() time.Time
	observed time.Time
	clock    syncdata.RunClock

	records map[string]map[string]json.RawMessage // entity -> id -> the last version added
	passes  map[string][]syncdata.ListEnd         // list entity -> the passes it ended
	streams map[string]syncdata.StreamStats
	cursors map[string]string
	credit  []syncdata.CreditTarget // due customers CreditTargets returns
	read    []syncdata.CreditTarget // customers a committed credit batch read
	finish  *syncdata.RunStats
	last    map[string]int64 // LastRead by stream; -1 when absent

	// refuse, when set, makes a pass of the entity not whole whatever arrived (pass counts from 1).
	refuse func(entity string, pass int) bool
}

func newMemSink() *memSink {
	return &memSink{records: map[string]map[string]json.RawMessage{}, passes: map[string][]syncdata.ListEnd{},
		streams: map[string]syncdata.StreamStats{}, cursors: map[string]string{}}
}

// open is the fetch.Open of the sink.
func (m *memSink) open(_ context.Context, account string, _ time.Time, now func() time.Time) (fetch.Sink, error) {
	m.account, m.now = account, now
	return m, nil
}

func (m *memSink) Run() syncdata.Run { return syncdata.Run{ID: 1, Account: m.account} }

func (m *memSink) SetRunClock(c syncdata.RunClock) error { m.clock = c; return nil }

func (m *memSink) Flag(context.Context, []syncdata.Flag) error { return nil }

func (m *memSink) SetTimeBound(syncdata.TimeBound) {}

func (m *memSink) FlagServiceClock(context.Context, time.Time, string) (int64, error) { return 0, nil }

func (m *memSink) ObservedAt() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.observed.IsZero() {
		m.observed = m.now().UTC()
	}
	return m.observed
}

func (m *memSink) RepairFutureTimes(context.Context, time.Time) (int64, int64, error) {
	return 0, 0, nil
}
func (m *memSink) AheadClockSeen(context.Context) (time.Time, error) { return time.Time{}, nil }
func (m *memSink) FanoutBatch() (int, time.Duration)                 { return 50, time.Minute }

func (m *memSink) StreamDone(_ context.Context, stream string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.streams[stream].Complete, nil
}

func (m *memSink) RecordStream(_ context.Context, st syncdata.StreamStats) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.streams[st.Stream] = st
	return nil
}

func (m *memSink) LastRead(_ context.Context, stream string) (int64, error) {
	if n, ok := m.last[stream]; ok {
		return n, nil
	}
	return -1, nil
}

func (m *memSink) Cursor(_ context.Context, stream string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cursors[stream], nil
}

func (m *memSink) SetCursor(_ context.Context, stream, v string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cursors[stream] = v
	return nil
}

func (m *memSink) add(e string, items []json.RawMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records[e] == nil {
		m.records[e] = map[string]json.RawMessage{}
	}
	for _, it := range items {
		var r struct {
			ID any `json:"id"`
		}
		if err := json.Unmarshal(it, &r); err != nil || r.ID == nil {
			return fmt.Errorf("%s: a record without an id: %.80s", e, it)
		}
		m.records[e][fmt.Sprint(r.ID)] = it
	}
	return nil
}

func (m *memSink) count(e string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.records[e])
}

type memList struct {
	m     *memSink
	e     string
	doubt string
}

func (m *memSink) List(e entity.Name) (fetch.ListSink, error) {
	return &memList{m: m, e: string(e)}, nil
}

func (l *memList) Add(_ context.Context, _ int, items []json.RawMessage) error {
	return l.m.add(l.e, items)
}

func (l *memList) EndPass(_ context.Context, end syncdata.ListEnd) (bool, error) {
	m := l.m
	m.mu.Lock()
	m.passes[l.e] = append(m.passes[l.e], end)
	pass, seen := len(m.passes[l.e]), int64(len(m.records[l.e]))
	m.mu.Unlock()
	whole := end.Stable && seen >= end.Expected && len(end.Conflicts) == 0 && len(end.Doubts) == 0
	if m.refuse != nil && m.refuse(l.e, pass) {
		whole = false
	}
	l.doubt = ""
	if !whole {
		l.doubt = fmt.Sprintf("not whole: %d of %d; %s", seen, end.Expected, strings.Join(end.Doubts, "; "))
	}
	return whole, nil
}

func (l *memList) Doubt() string                { return l.doubt }
func (l *memList) Finish(context.Context) error { return nil }

type memBatch struct {
	m *memSink
	e string
}

func (m *memSink) Batch(e entity.Name) fetch.BatchSink { return &memBatch{m: m, e: string(e)} }

func (b *memBatch) Add(_ context.Context, _ int, items []json.RawMessage) error {
	return b.m.add(b.e, items)
}
func (b *memBatch) Commit(context.Context) error { return nil }
func (b *memBatch) CommitCredit(_ context.Context, read []syncdata.CreditTarget) error {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	b.m.read = append(b.m.read, read...)
	return nil
}

func (m *memSink) Merged(entity.Name) syncdata.MergeResult { return syncdata.MergeResult{} }

func (m *memSink) CreditTargets(context.Context, syncdata.CreditPlan) ([]syncdata.CreditTarget, error) {
	return m.credit, nil
}

func (m *memSink) DetailTargets(context.Context, entity.Name) ([]string, error) { return nil, nil }

func (m *memSink) NewestCreated(context.Context, entity.Name) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

func (m *memSink) Flush(context.Context) error { return nil }

func (m *memSink) FinishRun(_ context.Context, st syncdata.RunStats) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finish = &st
	return nil
}

func (m *memSink) Close() {}
