package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewChecksConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"empty base", Config{APIKey: testKey}, "BaseURL: is empty"},
		{"no scheme", Config{BaseURL: "api.example.test", APIKey: testKey}, `no scheme: write it with one, e.g. https://api.example.test`},
		{"no scheme, a port", Config{BaseURL: "api.example.test:8443", APIKey: testKey}, `no scheme: write it with one, e.g. https://api.example.test:8443`},
		{"no scheme, a key in the query", Config{BaseURL: "api.example.test?key=" + testKey, APIKey: testKey}, `no scheme: write it with one, e.g. https://api.example.test`},
		{"unparseable", Config{BaseURL: "http://[::1", APIKey: testKey}, "cannot parse it as a URL"},
		{"ftp", Config{BaseURL: "ftp://api.example.test", APIKey: testKey}, `scheme "ftp": must be http or https`},
		{"no host", Config{BaseURL: "https://", APIKey: testKey}, "no host"},
		{"credentials in URL", Config{BaseURL: "https://user:" + testKey + "@api.example.test", APIKey: testKey}, "must not contain user information"},
		{"query", Config{BaseURL: "https://api.example.test/?key=" + testKey, APIKey: testKey}, "must not have a query"},
		{"no key", Config{BaseURL: "https://api.example.test"}, "APIKey: is empty"},
		{"key with newline", Config{BaseURL: "https://api.example.test", APIKey: testKey + "\n"}, "APIKey: has a space"},
		{"negative rate", Config{BaseURL: "https://api.example.test", APIKey: testKey, RatePerMin: -1}, "must not be negative"},
		{"backoff range", Config{BaseURL: "https://api.example.test", APIKey: testKey, MinBackoff: time.Minute}, "MinBackoff 1m0s exceeds MaxBackoff 30s"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: error contains the key: %v", tt.name, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := newClient(t, Config{BaseURL: "https://api.example.test/", APIKey: testKey})
	if c.lim.interval != 3*time.Second || c.maxAttempts != 6 || c.timeout != 30*time.Second ||
		c.minBackoff != 500*time.Millisecond || c.maxBackoff != 30*time.Second || c.base != "https://api.example.test" {
		t.Errorf("defaults: %+v", c)
	}
	if u := newClient(t, Config{BaseURL: "https://x.test", APIKey: testKey, Unlimited: true}); u.lim.interval != 0 {
		t.Error("Unlimited still paces")
	}
	if r := newClient(t, Config{BaseURL: "https://x.test", APIKey: testKey, RatePerMin: 60}); r.lim.interval != time.Second {
		t.Errorf("60/min paces at %s", r.lim.interval)
	}
}

// TestRequestShape: headers, a base URL with a path prefix, the query as given.
func TestRequestShape(t *testing.T) {
	var r *http.Request
	s := newServer(t, func(_ int64, w http.ResponseWriter, req *http.Request) {
		r = req
		writeJSON(w, 200, []byte(okPage))
	})
	cfg := fastConfig(s.URL + "/sandbox/")
	cfg.UserAgent = "billsync-test/1"
	c := newClient(t, cfg)
	if _, err := c.List(context.Background(), "/hl/v1/product/type/ebook", values("page", "2", "pageSize", "100", "search", "a&b c")); err != nil {
		t.Fatal(err)
	}
	if r.Method != http.MethodGet || r.URL.Path != "/sandbox/hl/v1/product/type/ebook" {
		t.Errorf("sent %s %s", r.Method, r.URL.Path)
	}
	if q := r.URL.Query(); q.Get("page") != "2" || q.Get("pageSize") != "100" || q.Get("search") != "a&b c" {
		t.Errorf("query %v", q)
	}
	h := r.Header
	if h.Get("Authorization") != "Bearer "+testKey || h.Get("Accept") != "application/json" ||
		h.Get("User-Agent") != "billsync-test/1" || h.Get("Content-Type") != "" {
		t.Errorf("headers %v", h)
	}
}

func TestServerTime(t *testing.T) {
	dates := []string{"Tue, 04 Mar 2025 05:06:07 GMT", "Tue, 04 Mar 2025 05:06:09 GMT", "Tue, 04 Mar 2025 05:06:08 GMT", "garbage"}
	s := newServer(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		w.Header()["Date"] = []string{dates[n-1]}
		writeJSON(w, 200, []byte(okPage))
	})
	c := newClient(t, fastConfig(s.URL))
	if !c.ServerTime().IsZero() {
		t.Error("server time before any answer")
	}
	want := []string{"2025-03-04T05:06:07Z", "2025-03-04T05:06:09Z", "2025-03-04T05:06:09Z", "2025-03-04T05:06:09Z"}
	for i, w := range want {
		if _, err := c.List(context.Background(), "/hl/v1/invoice", nil); err != nil {
			t.Fatal(err)
		}
		if got := c.ServerTime().Format(time.RFC3339); got != w {
			t.Errorf("after answer %d: %s, want %s (the latest, never going back)", i+1, got, w)
		}
	}
}

// TestServerTimeFollowsTheRun: a daemon keeps one client for every sync; after the service's
// clock was set back 48 hours between two runs, the next run's ServerTime is its own answers'
// Date, not the latest of the run before. On main it stayed 48 hours ahead.
func TestServerTimeFollowsTheRun(t *testing.T) {
	dates := []string{"Mon, 30 Nov 2026 09:00:00 GMT", "Sat, 28 Nov 2026 09:05:00 GMT"}
	s := newServer(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		w.Header()["Date"] = []string{dates[min(n, 2)-1]}
		writeJSON(w, 200, []byte(okPage))
	})
	c := newClient(t, fastConfig(s.URL))
	for run, want := range []string{"2026-11-30T09:00:00Z", "2026-11-28T09:05:00Z"} {
		c.ResetClockRange()
		if off, ok := c.ClockOffset(); !c.ServerTime().IsZero() || ok {
			t.Errorf("run %d: before its first answer: server time %v, offset %v known %t", run+1, c.ServerTime(), off, ok)
		}
		if _, err := c.List(context.Background(), "/hl/v1/invoice", nil); err != nil {
			t.Fatal(err)
		}
		if got := c.ServerTime().Format(time.RFC3339); got != want {
			t.Errorf("run %d: server time %s, want its answer's %s", run+1, got, want)
		}
	}
}

func TestStats(t *testing.T) {
	s := scripted(t, status(429, ``), status(500, ``), ok, status(404, ``))
	c := newClient(t, fastConfig(s.URL))
	if _, err := c.List(context.Background(), "/hl/v1/invoice", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(context.Background(), "/hl/v1/invoice", nil); err == nil {
		t.Fatal("want the 404")
	}
	if got, want := c.Stats(), (Stats{Requests: 4, Retries: 2, Throttled: 1, Errors: 1}); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

// TestKeyNeverLeaks runs every failure path against a server that echoes the Authorization header into its
// answers, and asserts the key appears in no error and no log line.
func TestKeyNeverLeaks(t *testing.T) {
	echo := func(code int, format string) step {
		return func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, code, []byte(fmt.Sprintf(format, r.Header.Get("Authorization"))))
		}
	}
	slow := step(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	paths := []struct {
		name string
		step step
	}{
		{"401 echoing the header", echo(401, `{"messages":"invalid token %s"}`)},
		{"500 plain text echo", echo(500, `upstream said: %s`)},
		{"429 echo", echo(429, `{"message":"%s is throttled"}`)},
		{"statusCode in body echo", echo(200, `{"statusCode":403,"messages":"%s"}`)},
		{"non-JSON 200 echo", echo(200, `<html>%s</html>`)},
		{"bad number echo", echo(200, `{"statusCode":"%s","data":[]}`)},
		{"bad data echo", echo(200, `{"statusCode":200,"data":"%s"`)},
		{"reset", resetConn},
		{"truncated", truncate},
		{"timeout", slow},
	}
	logger, logs := captureLogs()
	var errs []string
	for _, p := range paths {
		s := scripted(t, p.step)
		cfg := fastConfig(s.URL)
		cfg.Logger = logger
		cfg.MaxAttempts = 2
		cfg.RequestTimeout = 100 * time.Millisecond
		c := newClient(t, cfg)
		ctx := context.Background()
		calls := []func() error{
			func() error { _, err := c.List(ctx, "/hl/v1/invoice", values("page", "1")); return err },
			func() error { _, err := c.Detail(ctx, "/hl/v1/product/x"); return err },
			func() error { _, err := c.CreditHistory(ctx, "c1", nil); return err },
			func() error { _, err := c.WebhookHistory(ctx, 10, ""); return err },
			func() error { _, err := c.CreateInvoice(ctx, sampleInvoice()); return err },
			func() error { _, err := c.UpdateCustomerEmail(ctx, "a@x", "b@x"); return err },
		}
		for i, call := range calls {
			err := call()
			if err == nil {
				t.Fatalf("%s call %d: no error", p.name, i)
			}
			errs = append(errs, err.Error(), fmt.Sprintf("%+v %#v", err, err))
		}
	}
	// a refused connection, and the client and its config printed
	s := newServer(t, func(int64, http.ResponseWriter, *http.Request) {})
	s.Close()
	cfg := fastConfig(s.URL)
	cfg.Logger = logger
	c := newClient(t, cfg)
	if _, err := c.List(context.Background(), "/hl/v1/invoice", nil); err != nil {
		errs = append(errs, err.Error())
	}
	logger.Info("printing", "client", c, "config", cfg)
	badCfg := Config{BaseURL: "https://u:" + testKey + "@h.test/" + testKey + "?k=" + testKey, APIKey: testKey}
	errs = append(errs, fmt.Sprintf("%v %+v %#v", badCfg, badCfg, badCfg))
	errs = append(errs, fmt.Sprintf("%v %+v %#v %v %+v %#v", c, c, c, cfg, cfg, cfg))

	all := strings.Join(errs, "\n")
	if strings.Contains(all, testKey) {
		t.Errorf("the key leaked into an error or print:\n%s", all)
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("the key leaked into the logs:\n%s", logs)
	}
	// The echo did happen: without redaction these messages would have carried the key.
	if !strings.Contains(all, "invalid token Bearer [redacted]") || !strings.Contains(logs.String(), "[redacted]") {
		t.Errorf("the echoing server did not reach the errors; the test proves nothing:\n%s", all)
	}
	if !strings.Contains(logs.String(), "level=DEBUG msg=\"api request\" method=GET path=/hl/v1/invoice page=\"page 1\" status=401 attempt=1") {
		t.Errorf("no per-request debug line:\n%s", logs)
	}
}

var _ slog.LogValuer = Config{}
