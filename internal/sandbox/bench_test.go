package sandbox

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"
)

// BenchmarkSeed reports seeding time (ns/op), records and live heap after seeding.
//
//	go test -run '^$' -bench Seed -benchtime 1x ./internal/sandbox/
//
// With -short (make test's pass that runs every benchmark once) only scale 1: that pass proves the
// benchmark runs, not how fast, and scale 100 takes seconds of CPU to seed.
func BenchmarkSeed(b *testing.B) {
	scales := []float64{1, 10, 100}
	if testing.Short() {
		scales = scales[:1]
	}
	for _, scale := range scales {
		b.Run(fmt.Sprintf("scale=%g", scale), func(b *testing.B) {
			var s *Server
			for i := 0; i < b.N; i++ {
				s = nil
				runtime.GC()
				var err error
				if s, err = New(Options{Seed: 42, Scale: scale, Now: testNow}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			n := 0
			for _, c := range Collections {
				n += s.recordCount(c)
			}
			b.ReportMetric(float64(n), "records")
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MB")
			runtime.KeepAlive(s)
		})
	}
}

var (
	bigOnce sync.Once
	big     *Server
)

// bigServer is the simulator at scale 100 (~1M records), at scale 1 with -short (as BenchmarkSeed).
func bigServer(b *testing.B) *Server {
	bigOnce.Do(func() {
		scale := 100.0
		if testing.Short() {
			scale = 1
		}
		var err error
		if big, err = New(Options{Seed: 42, Scale: scale, Now: testNow}); err != nil {
			b.Fatal(err)
		}
	})
	return big
}

// discard is a ResponseWriter that only counts: the benchmark measures the
// simulator, not the loopback network.
type discard struct {
	h http.Header
	n int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkServe reports records served per second at scale 100 (~1M records),
// pages of 100, walking each list from the first to the last page.
//
//	go test -run '^$' -bench Serve -cpu 1 ./internal/sandbox/
func BenchmarkServe(b *testing.B) {
	s := bigServer(b)
	for _, l := range []struct {
		name, path string
		records    int
	}{
		{"customers", "/hl/v1/customer?pageSize=100&page=%d", s.recordCount("customers")},
		{"invoices", "/hl/v1/invoice?pageSize=100&page=%d", s.recordCount("invoices")},
		{"unpaid", "/hl/v1/transactions/unpaid?pageSize=100&page=%d", s.recordCount("unpaid_transactions")},
		{"reviews", "/hl/v1/reviews?pageSize=100&page=%d", s.recordCount("reviews")},
		{"products_search", "/hl/v1/product?pageSize=100&page=%d", s.recordCount("products")},
		{"invoices_paid_filter", "/hl/v1/invoice?sort=paid&pageSize=100&page=%d", s.recordCount("invoices") / 2},
	} {
		b.Run(l.name, func(b *testing.B) {
			pages := l.records / 100
			reqs := make([]*http.Request, pages)
			for i := range reqs {
				reqs[i] = httptest.NewRequest("GET", fmt.Sprintf(l.path, i+1), nil)
				reqs[i].Header.Set("Authorization", "Bearer "+DefaultKey)
			}
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				clear(w.h)
				s.ServeHTTP(w, reqs[i%pages])
			}
			b.ReportMetric(float64(b.N*100)/time.Since(start).Seconds(), "records/s")
			b.ReportMetric(float64(w.n)/float64(b.N), "bytes/page")
		})
	}
	b.Run("credit_history", func(b *testing.B) {
		s.mu.RLock()
		ids := make([]string, 0, s.w.customers.len())
		for _, c := range s.w.customers.items {
			ids = append(ids, c.id.String())
		}
		s.mu.RUnlock()
		w := &discard{h: http.Header{}}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r := httptest.NewRequest("GET", "/credit/v1/credit/customer/paginate-credit-history/"+ids[i%len(ids)]+"?limit=50", nil)
			r.Header.Set("Authorization", "Bearer "+DefaultKey)
			clear(w.h)
			s.ServeHTTP(w, r)
		}
	})
	b.Run("webhooks_cursor", func(b *testing.B) {
		w := &discard{h: http.Header{}}
		s.mu.RLock()
		hooks := s.w.webhooks.items
		s.mu.RUnlock()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			after := hooks[(i*50)%len(hooks)].createdAt
			r := httptest.NewRequest("GET", fmt.Sprintf("/hl/v2/webhooks/new-history?limit=50&startingAfter=%d", after), nil)
			r.Header.Set("Authorization", "Bearer "+DefaultKey)
			clear(w.h)
			s.ServeHTTP(w, r)
		}
		b.ReportMetric(float64(b.N*50)/time.Since(start).Seconds(), "records/s")
	})
}

// recordCount is len(Dump(c)) without encoding.
func (s *Server) recordCount(c string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, d := range collections {
		if d.name == c {
			return d.size(s.w)
		}
	}
	return 0
}
