package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// hundredInvoices is a 100-item invoice list page built from the fixture's item.
func hundredInvoices(b *testing.B) []byte {
	b.Helper()
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body(b, "Invoices__invoice-list-response.json"), &page); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"statusCode":200,"messages":"success","hasMore":true,"pageCount":10,"pageSize":"100","page":1,"total":1000,"data":[`)
	for i := range 100 {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(bytes.Replace(page.Data[0], []byte("01918da0-704b-45d8-bf14-afbd738eb682"),
			fmt.Appendf(nil, "01918da0-704b-45d8-bf14-%012d", i), 1))
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}

// BenchmarkDecodeListPage decodes a 100-item page as the client does (envelope, checks, item copies).
func BenchmarkDecodeListPage(b *testing.B) {
	page := hundredInvoices(b)
	saved := unmarshal
	defer func() { unmarshal = saved }()
	for _, c := range codecs {
		b.Run(c.name, func(b *testing.B) {
			unmarshal = c.fn
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := decodeList(page, 200, (*header).standardPage)
				if err != nil || len(p.Items) != 100 {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*100/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// BenchmarkListHTTP is a whole List call over loopback HTTP without pacing: the client's own overhead.
func BenchmarkListHTTP(b *testing.B) {
	page := hundredInvoices(b)
	s := newServer(b, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, page) })
	c, err := New(fastConfig(s.URL))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.List(context.Background(), "/hl/v1/invoice", values("page", "1")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*100/b.Elapsed().Seconds(), "items/s")
}

// BenchmarkLimiterReserve is the cost of taking a slot, shared by all goroutines.
func BenchmarkLimiterReserve(b *testing.B) {
	l := newLimiter(realClock{}, 20)
	now := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.reserve(now)
		}
	})
}
