package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// pageSummary is the golden form of a ListPage: the envelope as normalized, and the items by id.
func pageSummary(t *testing.T, p *ListPage) []byte {
	t.Helper()
	ids := make([]string, len(p.Items))
	for i, it := range p.Items {
		var v struct{ ID string }
		if err := json.Unmarshal(it, &v); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		ids[i] = v.ID
	}
	out, err := json.MarshalIndent(struct {
		Page, PageCount, PageSize int
		Total                     int64
		HasMore                   bool
		NextStartingAfter         string
		Message                   string
		ItemIDs                   []string
	}{p.Page, p.PageCount, p.PageSize, p.Total, p.HasMore, p.NextStartingAfter, p.Message, ids}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// checkItemsVerbatim asserts that every item is a byte-for-byte slice of the served body, in order.
func checkItemsVerbatim(t *testing.T, served []byte, items []json.RawMessage) {
	t.Helper()
	rest := served
	for i, it := range items {
		j := bytes.Index(rest, it)
		if j < 0 {
			t.Fatalf("item %d is not verbatim in the body: %s", i, it)
		}
		rest = rest[j+len(it):]
	}
}

func TestGoldenLists(t *testing.T) {
	tests := []struct {
		file   string
		golden string
		call   func(c *Client) (*ListPage, error)
	}{
		{"Invoices__invoice-list-response.json", "invoices", listCall("/hl/v1/invoice", "page", "1")},
		{"PaymentRequests__payment-request-list-response.json", "payments", listCall("/hl/v1/payment", "status", "paid")},
		{"Products__product-list-response.json", "products", listCall("/hl/v1/product/type/ebook", "page", "1", "pageSize", "100")},
		{"Customers__customer-list-response.json", "customers", listCall("/hl/v1/customer", "page", "1")},
		{"Transactions__unpaid-list-response.json", "unpaid", listCall("/hl/v1/transactions/unpaid")},
		{"Reviews__review-list-response.json", "reviews", listCall("/hl/v1/reviews")},
		{"customer-list-loose.json", "customers-loose", listCall("/hl/v1/customer", "page", "3")},
		{"CreditBasedProduct__credit-usage-paginate-history-response.json", "credit-usage", creditCall("faa4ee60")},
		{"CreditMembership__credit-paginate-history-response.json", "credit-membership", creditCall("faa4ee60")},
		{"credit-history-spec.json", "credit-spec", creditCall("faa4ee60")},
		{"webhook-history-first.json", "webhooks-first", webhookCall(50, "")},
		{"webhook-history-last.json", "webhooks-last", webhookCall(50, "1745919352229")},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			served := body(t, tt.file)
			s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, served) })
			withCodecs(t, func(t *testing.T) {
				p, err := tt.call(newClient(t, fastConfig(s.URL)))
				if err != nil {
					t.Fatal(err)
				}
				checkItemsVerbatim(t, served, p.Items)
				golden(t, "lists/"+tt.golden+".golden", pageSummary(t, p))
			})
		})
	}
}

func listCall(path string, kv ...string) func(c *Client) (*ListPage, error) {
	return func(c *Client) (*ListPage, error) { return c.List(context.Background(), path, values(kv...)) }
}

func creditCall(customer string) func(c *Client) (*ListPage, error) {
	return func(c *Client) (*ListPage, error) {
		return c.CreditHistory(context.Background(), customer, values("page", "1", "limit", "5"))
	}
}

func webhookCall(limit int, after string) func(c *Client) (*ListPage, error) {
	return func(c *Client) (*ListPage, error) { return c.WebhookHistory(context.Background(), limit, after) }
}

func values(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q
}

// TestListEnvelopeVariants covers the tolerated shapes field by field.
func TestListEnvelopeVariants(t *testing.T) {
	type want struct {
		page, count, size int
		total             int64
		more              bool
		msg               string
		items             int
	}
	tests := []struct {
		name string
		body string
		want want
	}{
		{"spec shape", `{"statusCode":200,"messages":"success","hasMore":true,"pageCount":3,"pageSize":10,"page":1,"total":25,"data":[{},{}]}`,
			want{1, 3, 10, 25, true, "success", 2}},
		{"numbers as strings", `{"statusCode":"200","messages":"ok","hasMore":"false","pageCount":"3","pageSize":"10","page":"3","total":"25","data":[{}]}`,
			want{3, 3, 10, 25, false, "ok", 1}},
		{"numbers as floats", `{"statusCode":200.0,"pageCount":3.0,"pageSize":1e1,"page":2,"total":25,"data":[]}`,
			want{2, 3, 10, 25, true, "", 0}},
		{"nulls are absent", `{"statusCode":null,"messages":null,"hasMore":null,"pageCount":null,"pageSize":null,"page":null,"total":null,"data":[]}`,
			want{0, 0, 0, -1, false, "", 0}},
		{"empty strings are absent", `{"pageCount":"","pageSize":" ","page":"1","total":"","data":[]}`,
			want{1, 0, 0, -1, false, "", 0}},
		{"totalCustomer", `{"statusCode":200,"messages":"success","hasMore":true,"pageCount":98,"pageSize":10,"page":1,"totalCustomer":1176,"data":[]}`,
			want{1, 98, 10, 1176, true, "success", 0}},
		{"total wins over totalCustomer", `{"total":5,"totalCustomer":9,"data":[]}`,
			want{0, 0, 0, 5, false, "", 0}},
		{"message instead of messages", `{"statusCode":200,"message":"done","data":[]}`,
			want{0, 0, 0, -1, false, "done", 0}},
		{"pageCount derived from total", `{"pageSize":10,"page":2,"total":21,"data":[]}`,
			want{2, 3, 10, 21, true, "", 0}},
		{"pageCount derived, last page", `{"pageSize":10,"page":3,"total":21,"data":[]}`,
			want{3, 3, 10, 21, false, "", 0}},
		{"applied pageSize differs from request", `{"pageSize":"10","page":1,"pageCount":14,"data":[]}`,
			want{1, 14, 10, -1, true, "", 0}},
		{"unknown fields ignored", `{"statusCode":200,"requestId":"x","extra":{"a":[1,{"b":null}]},"data":[{"id":"1","new":true}]}`,
			want{0, 0, 0, -1, false, "", 1}},
		{"data null is an empty page", `{"statusCode":200,"hasMore":false,"data":null}`,
			want{0, 0, 0, -1, false, "", 0}},
		{"numeric message", `{"messages":42,"data":[]}`,
			want{0, 0, 0, -1, false, "42", 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, []byte(tt.body)) })
			withCodecs(t, func(t *testing.T) {
				p, err := newClient(t, fastConfig(s.URL)).List(context.Background(), "/hl/v1/invoice", nil)
				if err != nil {
					t.Fatal(err)
				}
				got := want{p.Page, p.PageCount, p.PageSize, p.Total, p.HasMore, p.Message, len(p.Items)}
				if got != tt.want {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			})
		})
	}
}

// TestListEnvelopeDoubts: an envelope the spec does not allow but that can still be read is read,
// and doubted, so the pager cannot take its list for complete; one the spec allows is not doubted.
func TestListEnvelopeDoubts(t *testing.T) {
	tests := []struct {
		name, body, want string // want "" = no doubt
	}{
		{"spec shape", `{"hasMore":true,"pageCount":3,"pageSize":10,"page":1,"total":25,"data":[]}`, ""},
		{"numbers as strings are tolerated", `{"hasMore":true,"pageCount":"3","pageSize":"10","page":"1","total":"25","data":[]}`, ""},
		{"hasMore a string", `{"hasMore":"false","pageCount":2,"pageSize":100,"page":1,"totalCustomer":150,"data":[]}`,
			`hasMore: "false" is a string, not a boolean`},
		{"data null", `{"hasMore":false,"pageCount":0,"pageSize":100,"page":1,"total":0,"data":null}`, "data: null, not an array"},
		{"pageCount against the total", `{"hasMore":true,"pageCount":7,"pageSize":10,"page":1,"total":25,"data":[]}`,
			"pageCount 7 disagrees with the total 25 at page size 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, []byte(tt.body)) })
			withCodecs(t, func(t *testing.T) {
				p, err := newClient(t, fastConfig(s.URL)).List(context.Background(), "/hl/v1/customer", nil)
				if err != nil {
					t.Fatal(err)
				}
				got := strings.Join(p.Doubts, "; ")
				if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
					t.Errorf("doubts %q, want %q", got, tt.want)
				}
			})
		})
	}
}

// TestPathSegments: an id becomes one escaped path segment; one that cannot be one is an error
// and no request.
func TestPathSegments(t *testing.T) {
	s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, body(t, "credit-history-spec.json"))
	})
	c := newClient(t, fastConfig(s.URL))
	for _, id := range []string{"", ".", "..", "a\x00b", "line\nbreak", "del\x7f", "c1\u0085"} {
		if _, err := c.CreditHistory(context.Background(), id, nil); err == nil || !strings.Contains(err.Error(), "paginate-credit-history/{customerId}: customer id") {
			t.Errorf("id %q: %v, want an error naming the id", id, err)
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("%d requests sent for ids that cannot be path segments", n)
	}
	for id, want := range map[string]string{"a/b": "a%2Fb", "...": "...", "a b": "a%20b", "%2E": "%252E", "?x#y": "%3Fx%23y"} {
		got, err := PathSegment(id)
		if err != nil || got != want {
			t.Errorf("PathSegment(%q) = %q, %v; want %q", id, got, err, want)
		}
	}
}

// TestListMalformed checks that a bad body is a clear error naming method, path, page and field, and that it
// is retried (MaxAttempts is 2 here) since a proxy may have mangled it.
func TestListMalformed(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"data object", `{"statusCode":200,"data":{"id":"x"}}`,
			"GET /hl/v1/invoice page 3: decode: data: expected array, got object (after 2 attempts)"},
		{"data string", `{"statusCode":200,"data":"[]"}`, "page 3: decode: data: expected array, got string"},
		{"data missing", `{"statusCode":200,"messages":"success"}`, "page 3: decode: data: missing"},
		{"not JSON", `<html><body>Bad gateway</body></html>`,
			`page 3: decode: body is not JSON, not a JSON object: "<html><body>Bad gateway</body></html>"`},
		{"JSON array body", `[1,2]`, "decode: body is array, not a JSON object"},
		{"empty body", ``, "decode: empty body"},
		{"truncated JSON", `{"statusCode":200,"data":[{"id":"a"},{"id":`, "page 3: decode: body: "},
		{"word for a number", `{"statusCode":200,"pageSize":"ten","data":[]}`, `page 3: decode: pageSize: not an integer: "ten"`},
		{"fraction for a number", `{"statusCode":200,"page":1.5,"data":[]}`, `decode: page: not an integer: "1.5"`},
		{"object for a number", `{"statusCode":200,"total":{"n":1},"data":[]}`, "decode: total: expected a number, got object"},
		{"bad boolean", `{"statusCode":200,"hasMore":"yes","data":[]}`, `decode: hasMore: expected a boolean, got "\"yes\""`},
		{"bad statusCode", `{"statusCode":"ok","data":[]}`, `decode: statusCode: not an integer: "ok"`},
		{"item not JSON", `{"statusCode":200,"data":[{"id":1},nope]}`, "page 3: decode: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, []byte(tt.body)) })
			withCodecs(t, func(t *testing.T) {
				cfg := fastConfig(s.URL)
				cfg.MaxAttempts = 2
				before := s.hits.Load()
				_, err := newClient(t, cfg).List(context.Background(), "/hl/v1/invoice", values("page", "3"))
				if err == nil {
					t.Fatal("no error")
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %q does not contain %q", err, tt.want)
				}
				if n := s.hits.Load() - before; n != 2 {
					t.Errorf("%d attempts, want 2", n)
				}
			})
		})
	}
}

// TestBodyStatusDisagrees: a 200 whose statusCode says otherwise is an APIError carrying the body's status.
func TestBodyStatusDisagrees(t *testing.T) {
	tests := []struct {
		body     string
		status   int
		attempts int64
	}{
		{`{"statusCode":404,"messages":"invoice not found","data":[]}`, 404, 1},
		{`{"statusCode":"500","message":"db down"}`, 500, 3},
		{`{"statusCode":429,"messages":"slow down"}`, 429, 3},
	}
	for _, tt := range tests {
		s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, []byte(tt.body)) })
		_, err := newClient(t, fastConfig(s.URL)).List(context.Background(), "/hl/v1/invoice", values("page", "2"))
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != tt.status || !ae.InBody {
			t.Errorf("%s: got %v, want APIError with body status %d", tt.body, err, tt.status)
			continue
		}
		if !strings.Contains(err.Error(), "GET /hl/v1/invoice page 2: statusCode") {
			t.Errorf("error %q does not name the call", err)
		}
		if s.hits.Load() != tt.attempts {
			t.Errorf("%s: %d attempts, want %d", tt.body, s.hits.Load(), tt.attempts)
		}
	}
}

func TestCreditHistoryRequest(t *testing.T) {
	var got *http.Request
	s := newServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		got = r
		writeJSON(w, 200, body(t, "credit-history-spec.json"))
	})
	c := newClient(t, fastConfig(s.URL))
	p, err := c.CreditHistory(context.Background(), "cust/1 2", values("page", "2", "limit", "10", "productId", "p1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.URL.EscapedPath() != "/credit/v1/credit/customer/paginate-credit-history/cust%2F1%202" {
		t.Errorf("path %q: the customer id must be one escaped segment", got.URL.EscapedPath())
	}
	if q := got.URL.Query(); q.Get("page") != "2" || q.Get("limit") != "10" || q.Get("productId") != "p1" {
		t.Errorf("query %v", q)
	}
	if p.Page != 2 || p.PageCount != 3 || p.PageSize != 10 || p.Total != 23 || !p.HasMore || p.Message != "success" {
		t.Errorf("page %+v", p)
	}
	if _, err := c.CreditHistory(context.Background(), "", nil); err == nil {
		t.Error("empty customer id accepted")
	}
}

func TestCreditHistoryHasMore(t *testing.T) {
	tests := []struct {
		body string
		more bool
	}{
		{`{"statusCode":200,"page":3,"totalPages":3,"data":[]}`, false},
		{`{"statusCode":200,"page":2,"totalPages":"3","data":[]}`, true},
		{`{"statusCode":200,"page":2,"limit":5,"total":10,"data":[]}`, false}, // totalPages derived: 2
		{`{"statusCode":200,"page":2,"limit":5,"total":11,"data":[]}`, true},
		{`{"statusCode":200,"totalPages":3,"data":[]}`, false}, // no page: cannot tell
		{`{"statusCode":200,"hasMore":true,"data":[]}`, true},
	}
	for _, tt := range tests {
		s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, []byte(tt.body)) })
		p, err := newClient(t, fastConfig(s.URL)).CreditHistory(context.Background(), "c1", nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if p.HasMore != tt.more {
			t.Errorf("%s: HasMore %v, want %v", tt.body, p.HasMore, tt.more)
		}
	}
}

func TestWebhookCursor(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		next    string
		more    bool
		wantErr string
	}{
		{"string cursor", `{"statusCode":200,"hasMore":true,"nextStartingAfter":"1745919352229","data":[{}]}`, "1745919352229", true, ""},
		{"null cursor, last page", `{"statusCode":200,"hasMore":false,"nextStartingAfter":null,"data":[]}`, "", false, ""},
		{"absent cursor and hasMore", `{"statusCode":200,"data":[]}`, "", false, ""},
		{"numeric cursor", `{"statusCode":200,"hasMore":true,"nextStartingAfter":1745919352229,"data":[]}`, "1745919352229", true, ""},
		{"hasMore absent, cursor present", `{"statusCode":200,"nextStartingAfter":"17","data":[]}`, "17", true, ""},
		{"hasMore without a cursor", `{"statusCode":200,"hasMore":true,"nextStartingAfter":null,"data":[]}`, "", false,
			"GET /hl/v2/webhooks/new-history after 99: decode: nextStartingAfter: null while hasMore is true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q url.Values
			s := newServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
				q = r.URL.Query()
				writeJSON(w, 200, []byte(tt.body))
			})
			p, err := newClient(t, fastConfig(s.URL)).WebhookHistory(context.Background(), 50, "99")
			if q.Get("limit") != "50" || q.Get("startingAfter") != "99" {
				t.Errorf("query %v", q)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.NextStartingAfter != tt.next || p.HasMore != tt.more {
				t.Errorf("next %q more %v, want %q %v", p.NextStartingAfter, p.HasMore, tt.next, tt.more)
			}
		})
	}
}

func TestWebhookLimitChecked(t *testing.T) {
	s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, []byte(`{"data":[]}`)) })
	c := newClient(t, fastConfig(s.URL))
	for _, limit := range []int{-1, 51} {
		if _, err := c.WebhookHistory(context.Background(), limit, ""); err == nil {
			t.Errorf("limit %d accepted", limit)
		}
	}
	if s.hits.Load() != 0 {
		t.Error("a request was sent for a bad limit")
	}
	var sent url.Values
	s2 := newServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		sent = r.URL.Query()
		writeJSON(w, 200, []byte(`{"data":[]}`))
	})
	if _, err := newClient(t, fastConfig(s2.URL)).WebhookHistory(context.Background(), 0, ""); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 0 {
		t.Errorf("defaults should send no query, sent %v", sent)
	}
}

func TestDetail(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantID  string
		wantErr string
	}{
		{"product fixture", string(body(t, "Products__product-detail-response.json")), "6f8c19ff-5b97-4792-aa89-d2a12797b356", ""},
		{"payment fixture", string(body(t, "PaymentRequests__payment-request-detail-response.json")), "e890d24a-cfc0-4915-83d2-3166b9ffba9e", ""},
		{"array", `{"statusCode":200,"data":[{"id":"x"}]}`, "", "GET /hl/v1/product/abc: decode: data: expected object, got array"},
		{"null", `{"statusCode":200,"data":null}`, "", "data: expected object, got null"},
		{"missing", `{"statusCode":200}`, "", "data: expected object, got absent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, []byte(tt.body)) })
			withCodecs(t, func(t *testing.T) {
				cfg := fastConfig(s.URL)
				cfg.MaxAttempts = 1
				raw, err := newClient(t, cfg).Detail(context.Background(), "/hl/v1/product/abc")
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("error %v, want %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var v struct{ ID string }
				if err := json.Unmarshal(raw, &v); err != nil || v.ID != tt.wantID {
					t.Errorf("id %q (%v), want %q", v.ID, err, tt.wantID)
				}
				if !bytes.Contains([]byte(tt.body), raw) {
					t.Error("detail data is not the served bytes")
				}
			})
		})
	}
}

func TestPathChecked(t *testing.T) {
	c := newClient(t, fastConfig("http://127.0.0.1:1"))
	for _, p := range []string{"hl/v1/invoice", "/hl/v1/payment?status=paid", "/a#b"} {
		if _, err := c.List(context.Background(), p, nil); err == nil {
			t.Errorf("path %q accepted", p)
		}
		if _, err := c.Detail(context.Background(), p); err == nil {
			t.Errorf("detail path %q accepted", p)
		}
	}
	if c.Stats().Requests != 0 {
		t.Error("requests were sent")
	}
}

// TestItemsAreCopies: items must survive the reuse of the buffer they were decoded from.
func TestItemsAreCopies(t *testing.T) {
	withCodecs(t, func(t *testing.T) {
		buf := []byte(`{"statusCode":200,"data":[{"id":"a","n":1},{"id":"b","n":2}]}`)
		p, err := decodeList(buf, 200, (*header).standardPage)
		if err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = 'X'
		}
		if string(p.Items[0]) != `{"id":"a","n":1}` || string(p.Items[1]) != `{"id":"b","n":2}` {
			t.Errorf("items changed with the buffer: %s %s", p.Items[0], p.Items[1])
		}
	})
}

func TestInt(t *testing.T) {
	tests := []struct {
		in      string
		want    Int
		wantErr string
	}{
		{`42`, Int{42, true}, ""},
		{`-7`, Int{-7, true}, ""},
		{`"42"`, Int{42, true}, ""},
		{`" 42 "`, Int{42, true}, ""},
		{`42.0`, Int{42, true}, ""},
		{`"1e3"`, Int{1000, true}, ""},
		{`9007199254740993`, Int{9007199254740993, true}, ""},
		{`null`, Int{}, ""},
		{`""`, Int{}, ""},
		{`"4\u0032"`, Int{42, true}, ""},
		{`"abc"`, Int{}, `not an integer: "abc"`},
		{`1.5`, Int{}, `not an integer: "1.5"`},
		{`"NaN"`, Int{}, "not an integer"},
		{`1e400`, Int{}, "not an integer"},
		{`true`, Int{}, "expected a number, got boolean"},
		{`[1]`, Int{}, "expected a number, got array"},
	}
	for _, tt := range tests {
		withCodecs(t, func(t *testing.T) {
			var got Int
			err := got.UnmarshalJSON([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%s: error %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("%s: got %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
	// Int inside a struct, through the decoder, and back.
	withCodecs(t, func(t *testing.T) {
		var v struct{ A, B, C Int }
		if err := unmarshal([]byte(`{"A":"5","B":null}`), &v); err != nil {
			t.Fatal(err)
		}
		if v.A != (Int{5, true}) || v.B.Valid || v.C.Valid {
			t.Errorf("got %+v", v)
		}
		out, _ := json.Marshal(v)
		if string(out) != `{"A":5,"B":null,"C":null}` {
			t.Errorf("marshal %s", out)
		}
	})
}

func TestFloat(t *testing.T) {
	tests := []struct {
		in   string
		want Float
		bad  bool
	}{
		{`12.5`, Float{12.5, true}, false},
		{`"12.5"`, Float{12.5, true}, false},
		{`null`, Float{}, false},
		{`"x"`, Float{}, true},
		{`"Inf"`, Float{}, true},
	}
	for _, tt := range tests {
		var got Float
		err := got.UnmarshalJSON([]byte(tt.in))
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("%s: got %+v, %v", tt.in, got, err)
		}
	}
}
