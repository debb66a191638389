package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// rawGet does a GET and returns status, body and the transport or read error.
func rawGet(t *testing.T, client *http.Client, url string) (int, []byte, http.Header, error) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+DefaultKey)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header, err
}

func TestFaultKindsOnGET(t *testing.T) {
	tests := []struct {
		kind  FaultKind
		check func(t *testing.T, status int, body []byte, h http.Header, err error)
	}{
		{FaultRateLimit, func(t *testing.T, status int, body []byte, h http.Header, err error) {
			if status != 429 || h.Get("Retry-After") != "7" {
				t.Errorf("status %d Retry-After %q", status, h.Get("Retry-After"))
			}
		}},
		{FaultServerError, func(t *testing.T, status int, body []byte, h http.Header, err error) {
			if !slices.Contains([]int{500, 502, 503}, status) || !strings.Contains(string(body), `"statusCode":5`) {
				t.Errorf("status %d body %s", status, body)
			}
		}},
		{FaultReset, func(t *testing.T, status int, body []byte, h http.Header, err error) {
			if err == nil {
				t.Errorf("no transport error; status %d", status)
			}
		}},
		{FaultTruncate, func(t *testing.T, status int, body []byte, h http.Header, err error) {
			if err != nil || status != 200 || json.Valid(body) || h.Get("Content-Length") != itoa(len(body)) {
				t.Errorf("err %v status %d valid %v length %q/%d", err, status, json.Valid(body), h.Get("Content-Length"), len(body))
			}
		}},
		{FaultTruncateDrop, func(t *testing.T, status int, body []byte, h http.Header, err error) {
			if err == nil || status != 200 {
				t.Errorf("err %v status %d: want a 200 whose body read fails", err, status)
			}
		}},
		{FaultStringNumbers, func(t *testing.T, status int, body []byte, h http.Header, err error) {
			var m map[string]any
			json.Unmarshal(body, &m)
			if m["pageSize"] != "10" || m["statusCode"] != "200" {
				t.Errorf("pageSize %#v statusCode %#v", m["pageSize"], m["statusCode"])
			}
			if a := items(m)[0]["amount"]; a == nil || !isString(a) {
				t.Errorf("amount %#v, want a string", a)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			s, ts := newTest(t, Options{Faults: Faults{RetryAfter: 7}})
			if err := s.FailNext(tc.kind, 1, "/hl/v1/invoice"); err != nil {
				t.Fatal(err)
			}
			// Another path is not hit.
			mustOK(t, get(t, ts, "/hl/v1/customer"))
			status, body, h, err := rawGet(t, ts.Client(), ts.URL+"/hl/v1/invoice")
			tc.check(t, status, body, h, err)
			// Only the next one.
			mustOK(t, get(t, ts, "/hl/v1/invoice"))
			// A killed connection's handler may log after the next request's.
			var log []RequestLog
			for i := 0; i < 200 && len(log) < 3; i++ {
				time.Sleep(5 * time.Millisecond)
				log = s.Requests()
			}
			hit := 0
			for _, l := range log {
				if l.Fault == tc.kind && l.Path == "/hl/v1/invoice" {
					hit++
				} else if l.Fault != FaultNone {
					t.Errorf("unexpected fault %q on %s", l.Fault, l.Path)
				}
			}
			if len(log) != 3 || hit != 1 {
				t.Errorf("%d requests logged, %d hit by %s; want 3 and 1", len(log), hit, tc.kind)
			}
		})
	}
}

func isString(v any) bool { _, ok := v.(string); return ok }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestFaultSlow(t *testing.T) {
	s, ts := newTest(t, Options{Faults: Faults{SlowMs: 3000}})
	s.FailNext(FaultSlow, 1, "")
	client := &http.Client{Timeout: 100 * time.Millisecond}
	if _, _, _, err := rawGet(t, client, ts.URL+"/hl/v1/customer"); err == nil {
		t.Error("slow response arrived within 100 ms")
	}
	if status, _, _, err := rawGet(t, client, ts.URL+"/hl/v1/customer"); err != nil || status != 200 {
		t.Errorf("next request: %d %v", status, err)
	}
}

func TestFaultPagingShifts(t *testing.T) {
	for _, tc := range []struct {
		kind       FaultKind
		totalDelta int64
	}{{FaultInsertWhilePaging, 1}, {FaultDuplicatePage, 0}} {
		for _, path := range []string{"/hl/v1/invoice", "/hl/v1/customer", "/hl/v1/transactions/unpaid", "/hl/v1/reviews", "/hl/v1/product/type/course"} {
			t.Run(string(tc.kind)+path, func(t *testing.T) {
				s, ts := newTest(t, Options{})
				totalKey := map[bool]string{true: "totalCustomer", false: "total"}[path == "/hl/v1/customer"]
				p1 := mustOK(t, get(t, ts, path+"?page=1&pageSize=2"))
				s.FailNext(tc.kind, 1, path)
				p2 := mustOK(t, get(t, ts, path+"?page=2&pageSize=2"))
				last, first := items(p1)[1], items(p2)[0]
				if last["id"] != first["id"] {
					t.Errorf("page 2 starts with %v, want page 1's last %v repeated", first["id"], last["id"])
				}
				if d := num(p2[totalKey]) - num(p1[totalKey]); d != tc.totalDelta {
					t.Errorf("total moved by %d, want %d", d, tc.totalDelta)
				}
			})
		}
	}
	t.Run("credit history insert", func(t *testing.T) {
		s, ts := newTest(t, Options{})
		l := dumped(t, s, "credit_ledger")[0]
		path := "/credit/v1/credit/customer/paginate-credit-history/" + str(l["customerId"])
		p1 := mustOK(t, get(t, ts, path+"?page=1&limit=1"))
		s.FailNext(FaultInsertWhilePaging, 1, "/credit/")
		p2 := mustOK(t, get(t, ts, path+"?page=2&limit=1"))
		if items(p1)[0]["id"] != items(p2)[0]["id"] || num(p2["total"]) != num(p1["total"])+1 {
			t.Errorf("page 2 %v total %v; page 1 %v total %v", items(p2)[0]["id"], p2["total"], items(p1)[0]["id"], p1["total"])
		}
	})
	t.Run("webhook duplicate", func(t *testing.T) {
		s, ts := newTest(t, Options{})
		p1 := mustOK(t, get(t, ts, "/hl/v2/webhooks/new-history?limit=5"))
		s.FailNext(FaultDuplicatePage, 1, "")
		p2 := mustOK(t, get(t, ts, "/hl/v2/webhooks/new-history?limit=5&startingAfter="+str(p1["nextStartingAfter"])))
		if items(p1)[4]["id"] != items(p2)[0]["id"] {
			t.Error("duplicate fault did not repeat the cursor's record")
		}
	})
}

// TestFaultApplyThenFail: the write happens even though the answer is lost.
func TestFaultApplyThenFail(t *testing.T) {
	for _, kind := range []FaultKind{FaultApplyThen500, FaultApplyThenReset, FaultApplyThenHang} {
		t.Run(string(kind), func(t *testing.T) {
			s, ts := newTest(t, Options{Faults: Faults{HangMs: 5000}})
			l := dumped(t, s, "credit_ledger")[0]
			before := len(s.Dump("credit_ledger"))
			s.FailNext(kind, 1, "/credit/")
			// GETs are not hit by apply_then_* kinds.
			mustOK(t, get(t, ts, "/credit/v1/credit/customer/paginate-credit-history/"+str(l["customerId"])))
			body, _ := json.Marshal(map[string]any{"customerId": l["customerId"], "productId": l["productId"], "amount": 10})
			req, _ := http.NewRequest("POST", ts.URL+"/credit/v1/credit/customer/add-credit", strings.NewReader(string(body)))
			req.Header.Set("Authorization", "Bearer "+DefaultKey)
			client := &http.Client{Timeout: 300 * time.Millisecond}
			resp, err := client.Do(req)
			switch kind {
			case FaultApplyThen500:
				if err != nil || resp.StatusCode != 500 {
					t.Fatalf("err %v, want a 500", err)
				}
				resp.Body.Close()
			default:
				if err == nil {
					resp.Body.Close()
					t.Fatalf("got status %d, want no answer", resp.StatusCode)
				}
			}
			if after := len(s.Dump("credit_ledger")); after != before+1 {
				t.Errorf("ledger %d -> %d: the write was not applied", before, after)
			}
		})
	}
}

func TestFaultFractionsDeterministic(t *testing.T) {
	f := Faults{Seed: 99, PathPrefix: "/hl/v1/customer", ServerError: 0.3, RateLimit: 0.1}
	run := func() []FaultKind {
		s, ts := newTest(t, Options{Faults: f})
		for i := 0; i < 200; i++ {
			get(t, ts, "/hl/v1/customer")
			get(t, ts, "/hl/v1/reviews")
		}
		var kinds []FaultKind
		for _, r := range s.Requests() {
			if r.Path == "/hl/v1/reviews" && r.Fault != FaultNone {
				t.Fatalf("fault %s outside the path prefix", r.Fault)
			}
			if r.Path == "/hl/v1/customer" {
				kinds = append(kinds, r.Fault)
			}
		}
		return kinds
	}
	a, b := run(), run()
	if !slices.Equal(a, b) {
		t.Fatal("same fault seed, different faults")
	}
	counts := map[FaultKind]int{}
	for _, k := range a {
		counts[k]++
	}
	if counts[FaultServerError] < 35 || counts[FaultServerError] > 85 || counts[FaultRateLimit] < 8 || counts[FaultRateLimit] > 35 {
		t.Errorf("over 200 requests: %v, want about 60 server errors and 20 rate limits", counts)
	}
}

func TestFaultsValidationAndAdmin(t *testing.T) {
	if _, err := New(Options{Scale: 0.05, Faults: Faults{ServerError: 0.7, Reset: 0.5}}); err == nil {
		t.Error("fractions over 1 accepted")
	}
	s, ts := newTest(t, Options{Admin: true})
	if err := s.FailNext("bogus", 1, ""); err == nil {
		t.Error("unknown kind accepted")
	}
	r := do(t, ts, "PUT", "/__sandbox/faults", "", []byte(`{"serverError":1,"pathPrefix":"/hl/v1/reviews"}`))
	mustOK(t, r)
	if r := get(t, ts, "/hl/v1/reviews"); r.status < 500 {
		t.Errorf("after PUT faults: %d", r.status)
	}
	if r := do(t, ts, "PUT", "/__sandbox/faults", "", []byte(`{"serverErrors":1}`)); r.status != 400 {
		t.Errorf("unknown field: %d", r.status)
	}
	reqs := mustOK(t, do(t, ts, "GET", "/__sandbox/requests", "", nil))
	if len(reqs["data"].([]any)) < 1 {
		t.Error("admin requests empty")
	}
}
