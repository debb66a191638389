package fetch

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/billsync/billsync/internal/api"
)

func BenchmarkGuardCheck(b *testing.B) {
	var pages []*api.ListPage
	for p := 0; p < 100; p++ {
		lp := &api.ListPage{Page: p + 1, PageCount: 100, PageSize: 100, Total: 10000, HasMore: true}
		for i := 0; i < 100; i++ {
			lp.Items = append(lp.Items, json.RawMessage(fmt.Sprintf(`{"id":"%08d-4d88-41ff-8777-06564d906fe7","createdAt":1778223034383,"email":"someone@example.com","mobile":"08123456789","name":"Kirana Lestari","status":"active","updatedAt":1778225558788,"userId":"11f4d767-4d88-41ff-8777-06564d906fe7"}`, p*100+i)))
		}
		pages = append(pages, lp)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		g := newGuard("GET /x", DefaultMaxPages, nil)
		for _, p := range pages {
			if _, err := g.check(p.Page, p); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10000), "ns/record")
}
