package sandbox

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// testNow is the simulated clock's start in every test.
var testNow = time.Date(2025, 9, 1, 8, 0, 0, 0, time.UTC)

// newTest starts a small sandbox behind a real HTTP server.
func newTest(t testing.TB, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	if opts.Scale == 0 {
		opts.Scale = 0.05
	}
	if opts.Now.IsZero() {
		opts.Now = testNow
	}
	if opts.Seed == 0 {
		opts.Seed = 7
	}
	if opts.ListOrder == "" {
		opts.ListOrder = OrderNewest // the simulator's own tests check the default order
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return m
}

func do(t testing.TB, ts *httptest.Server, method, path, key string, body any) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func get(t testing.TB, ts *httptest.Server, path string) reply {
	t.Helper()
	return do(t, ts, http.MethodGet, path, DefaultKey, nil)
}

func post(t testing.TB, ts *httptest.Server, path string, body any) reply {
	t.Helper()
	return do(t, ts, http.MethodPost, path, DefaultKey, body)
}

// mustOK fails unless r is a 200 and returns its body decoded.
func mustOK(t testing.TB, r reply) map[string]any {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, body %s", r.status, r.body)
	}
	return r.json(t)
}

func dumped(t testing.TB, s *Server, coll string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, raw := range s.Dump(coll) {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("dump %s: %v", coll, err)
		}
		out = append(out, m)
	}
	return out
}

func items(m map[string]any) []map[string]any {
	arr, _ := m["data"].([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, v := range arr {
		out = append(out, v.(map[string]any))
	}
	return out
}

func num(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		var n int64
		json.Unmarshal([]byte(x), &n)
		return n
	}
	return -1
}

func str(v any) string { s, _ := v.(string); return s }

// firstOf returns a record of coll matching keep, failing the test if none.
func firstOf(t testing.TB, s *Server, coll string, keep func(map[string]any) bool) map[string]any {
	t.Helper()
	for _, m := range dumped(t, s, coll) {
		if keep(m) {
			return m
		}
	}
	t.Fatalf("no %s record matches", coll)
	return nil
}

func contains(haystack, needle string) bool { return strings.Contains(haystack, needle) }
