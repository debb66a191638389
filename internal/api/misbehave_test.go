package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/logbuf"
)

// leaksKey returns the first run of minFragment characters of the key found in s: none may appear.
func leaksKey(s string) string {
	for i := 0; i+minFragment <= len(testKey); i++ {
		if f := testKey[i : i+minFragment]; strings.Contains(s, f) {
			return f
		}
	}
	return ""
}

// catcher is a second server that records whether the key ever reached it.
type catcher struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
	posts int
}

func newCatcher(t *testing.T, tls bool) *catcher {
	c := &catcher{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.auths = append(c.auths, r.Header.Get("Authorization"))
		if r.Method == http.MethodPost {
			c.posts++
		}
		c.mu.Unlock()
		writeJSON(w, 200, []byte(okPage))
	})
	if tls {
		c.Server = httptest.NewTLSServer(h)
	} else {
		c.Server = httptest.NewServer(h)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRedirectPolicy: the key goes to the configured scheme, host and port only, and a write is
// never sent again, whatever the redirect.
func TestRedirectPolicy(t *testing.T) {
	other := newCatcher(t, false)
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())
	tests := []struct {
		name    string
		tls     bool // the configured service is https
		status  int
		to      func(self string) string
		post    bool
		wantErr string // "" = followed
	}{
		{"302 to the same IP on another port", false, 302, func(string) string { return other.URL + "/hl/v1/invoice?k=1" }, false,
			"HTTP 302 redirect to http://127.0.0.1:" + otherPort + "/hl/v1/invoice?k=1 refused: another host or port"},
		{"https 302 to plain http", true, 302, func(self string) string { return other.URL + "/hl/v1/invoice" }, false,
			"refused: scheme http differs from the configured https"},
		{"307 on add-credit to another host", false, 307, func(string) string { return other.URL + "/credit/v1/credit/customer/add-credit" }, true,
			"HTTP 307 redirect to http://127.0.0.1:" + otherPort + "/credit/v1/credit/customer/add-credit refused: a POST is never sent again"},
		{"307 on add-credit to the same origin", false, 307, func(self string) string { return self + "/credit/v1/credit/customer/add-credit?again=1" }, true,
			"refused: a POST is never sent again"},
		{"Location carrying the key", false, 302, func(string) string { return other.URL + "/x?token=" + testKey }, false,
			"token=[redacted]"},
		{"same-origin GET redirect is followed", false, 302, func(self string) string { return self + "/hl/v1/invoice?moved=1" }, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var self string
			var hits, posts int
			var mu sync.Mutex
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hits++
				if r.Method == http.MethodPost {
					posts++
				}
				mu.Unlock()
				if r.URL.Query().Get("moved") == "1" || r.URL.Query().Get("again") == "1" {
					writeJSON(w, 200, []byte(okPage))
					return
				}
				http.Redirect(w, r, tt.to(self), tt.status)
			})
			var srv *httptest.Server
			if tt.tls {
				srv = httptest.NewTLSServer(h)
			} else {
				srv = httptest.NewServer(h)
			}
			defer srv.Close()
			self = srv.URL
			cfg := fastConfig(srv.URL)
			cfg.HTTPClient = srv.Client()
			logger, logs := captureLogs()
			cfg.Logger = logger
			c := newClient(t, cfg)
			before := len(other.auths)
			var err error
			if tt.post {
				_, err = c.AddCredit(context.Background(), AddCreditRequest{CustomerID: "c1", ProductID: "p1", Amount: 100})
			} else {
				_, err = c.List(context.Background(), "/hl/v1/invoice", values("page", "1"))
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("same-origin redirect: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v\nwant %q", err, tt.wantErr)
			}
			var re *RedirectError
			if !errors.As(err, &re) {
				t.Errorf("%v is not a RedirectError", err)
			}
			other.mu.Lock()
			reached := other.auths[before:]
			other.mu.Unlock()
			if len(reached) != 0 {
				t.Errorf("the redirect target got %d requests (Authorization %q)", len(reached), reached)
			}
			if hits != 1 || posts > 1 {
				t.Errorf("the service got %d requests (%d POSTs), want exactly one: a redirect is not retried", hits, posts)
			}
			if tt.post && !IsUnknownOutcome(err) {
				t.Errorf("a redirected write is not an unknown outcome: %v", err)
			}
			if f := leaksKey(err.Error() + logs.String()); f != "" {
				t.Errorf("key fragment %q in the error or logs:\n%v\n%s", f, err, logs)
			}
		})
	}
}

// TestRedactionBeforeCut: a 500 whose HTML body echoes the key across the snippet's cut, or a
// value cut in a decode error: no fragment of the key survives in errors or logs.
func TestRedactionBeforeCut(t *testing.T) {
	for shift := 90; shift <= 125; shift++ {
		pad := strings.Repeat("x", shift)
		bodies := map[string]step{
			"500 html":  status(500, "<html><body>"+pad+" token "+testKey+" more</body></html>"),
			"200 html":  status(200, "<html>"+pad+testKey+"</html>"),
			"bad total": status(200, `{"statusCode":200,"total":"`+pad[:shift%30]+testKey+`","data":[]}`),
			"half key":  status(500, "<p>"+pad+testKey[:len(testKey)/2]+"</p>"),
		}
		for name, st := range bodies {
			s := scripted(t, st)
			cfg := fastConfig(s.URL)
			logger, logs := captureLogs()
			cfg.Logger = logger
			cfg.MaxAttempts = 2
			c := newClient(t, cfg)
			_, err := c.List(context.Background(), "/hl/v1/invoice", values("page", "1"))
			if err == nil {
				t.Fatalf("%s shift %d: no error", name, shift)
			}
			if f := leaksKey(err.Error() + logs.String()); f != "" {
				t.Fatalf("%s shift %d: key fragment %q leaked:\n%v\n%s", name, shift, f, err, logs)
			}
			s.Close()
		}
	}
}

func TestRedactSecret(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a " + testKey + " b", "a [redacted] b"},
		{"cut " + testKey[:9] + "…", "cut [redacted]…"},
		{"end …" + testKey[10:], "end …[redacted]"},
		{"short sk_te is fine", "short sk_te is fine"},
		{"nothing here", "nothing here"},
	}
	for _, tt := range tests {
		if got := redactSecret(tt.in, testKey); got != tt.want {
			t.Errorf("redactSecret(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := redactSecret("key abc appears", "abc"); got != "key [redacted] appears" {
		t.Errorf("short key: %q", got)
	}
}

// TestWaitsAreVisible: every retry and every long limiter wait is logged with its cause and
// delay, and reported to OnWait.
func TestWaitsAreVisible(t *testing.T) {
	s := scripted(t, withHeader("Retry-After", "12", status(429, `{"messages":"slow down"}`)), status(503, `{"messages":"x"}`), ok)
	cfg := fastConfig(s.URL)
	logger, logs := captureLogs()
	cfg.Logger = logger
	var mu sync.Mutex
	var waits []Wait
	cfg.OnWait = func(w Wait) { mu.Lock(); waits = append(waits, w); mu.Unlock() }
	c := newClient(t, cfg)
	useFakeClock(c)
	if _, err := c.List(context.Background(), "/hl/v1/invoice", values("page", "3")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range waits {
		got = append(got, fmt.Sprintf("%s %s %s", w.Where, w.Cause, w.Delay.Round(time.Second)))
	}
	want := "GET /hl/v1/invoice page 3 429 Retry-After 12s"
	if len(got) == 0 || got[0] != want {
		t.Errorf("waits %q, want first %q", got, want)
	}
	if !strings.Contains(strings.Join(got, "\n"), "retry after HTTP 503") {
		t.Errorf("waits %q: the 503 retry is missing", got)
	}
	for _, line := range []string{`level=INFO msg="api waiting" method=GET path=/hl/v1/invoice page="page 3" cause="429 Retry-After" delay=12s attempt=1`,
		`level=INFO msg="api waiting" method=GET path=/hl/v1/invoice page="page 3" cause="retry after HTTP 503"`} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("no log line %s in\n%s", line, logs)
		}
	}
}

// TestLimiterWaitLogged: a limiter wait after a 429 pause is logged with its cause.
func TestLimiterWaitLogged(t *testing.T) {
	s := scripted(t, ok)
	cfg := fastConfig(s.URL)
	logger, logs := captureLogs()
	cfg.Logger = logger
	var waits []Wait
	cfg.OnWait = func(w Wait) { waits = append(waits, w) }
	c := newClient(t, cfg)
	clk := useFakeClock(c)
	c.lim.pause(clk.Now().Add(20 * time.Second))
	if _, err := c.List(context.Background(), "/hl/v1/customer", values("page", "1")); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0].Cause != "429 Retry-After" || waits[0].Delay != 20*time.Second {
		t.Errorf("waits %+v", waits)
	}
	if !strings.Contains(logs.String(), `cause="429 Retry-After" delay=20s`) {
		t.Errorf("no limiter wait line:\n%s", logs)
	}
}

// TestUnreachableFailsWithin30s: nothing listens at the base URL. With the default attempts,
// backoff and reachability bound the call fails within about 30 s, naming the host, the cause and
// the attempts; with many attempts allowed, the 30 s of silence still end it.
func TestUnreachableFailsWithin30s(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, attempts := range []int{0, 1000} {
		c := newClient(t, Config{BaseURL: "http://" + addr, APIKey: testKey, MaxAttempts: attempts, Unlimited: true})
		clk := useFakeClock(c)
		_, err := c.List(context.Background(), "/hl/v1/customer", values("page", "1"))
		var total time.Duration
		for _, w := range clk.waits() {
			total += w
		}
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		for _, want := range []string{"GET /hl/v1/customer page 1", "cannot reach http://" + addr, "connection refused", "attempts)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("attempts %d: error %q lacks %q", attempts, msg, want)
			}
		}
		// 5 jittered backoffs of 0.5 to 8 s sum to 7.75-15.5 s; with more attempts the 30 s of silence end it
		if total > 30*time.Second || total < 7*time.Second {
			t.Errorf("attempts %d: waited %s in all, want 7.75-30 s", attempts, total)
		}
	}
}

// TestRateLimitWaitsSummedUp: at a realistic rate nearly every request queues behind the limiter.
// Each wait is a Debug line; at Info the log sums them up at most once a minute, with the count
// and the longest wait, and the rest at the end of the run.
func TestRateLimitWaitsSummedUp(t *testing.T) {
	s := scripted(t, ok)
	cfg := fastConfig(s.URL)
	cfg.Unlimited, cfg.RatePerMin = false, 20
	var buf logbuf.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c := newClient(t, cfg)
	useFakeClock(c)
	const calls, workers = 60, 6 // 3 minutes at 20/min; a fan-out keeps several requests queued
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < calls; i += workers {
				if _, err := c.List(context.Background(), "/hl/v1/customer", values("page", fmt.Sprint(i+1))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	c.FlushWaits(context.Background())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var summed int
	for _, l := range lines {
		if strings.Contains(l, `msg="api waiting"`) {
			t.Errorf("a routine wait at Info: %s", l)
		}
		if strings.Contains(l, `msg="api rate limit waits"`) {
			var n int
			if _, err := fmt.Sscanf(l[strings.Index(l, "requests="):], "requests=%d", &n); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			summed += n
			if !strings.Contains(l, "longest=") || !strings.Contains(l, `limit=20/min`) {
				t.Errorf("summary line lacks the longest wait or the limit: %s", l)
			}
		}
	}
	// the first request goes at once; 59 wait 3 s each: one line per minute of waiting, and the rest
	if len(lines) > 4 || len(lines) < 3 {
		t.Errorf("%d Info lines for %d requests, want 3-4 (one a minute):\n%s", len(lines), calls, buf.String())
	}
	if summed != calls-1 {
		t.Errorf("summary lines count %d waits, want %d:\n%s", summed, calls-1, buf.String())
	}
}
