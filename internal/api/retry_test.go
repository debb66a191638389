package api

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const okPage = `{"statusCode":200,"messages":"success","hasMore":false,"page":1,"pageCount":1,"pageSize":10,"total":1,"data":[{"id":"a"}]}`

// step is one scripted answer of a test server.
type step func(w http.ResponseWriter, r *http.Request)

func status(code int, body string) step {
	return func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, code, []byte(body)) }
}

func withHeader(k, v string, s step) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(k, v)
		s(w, r)
	}
}

var (
	ok         = status(200, okPage)
	resetConn  = step(func(w http.ResponseWriter, r *http.Request) { io.ReadAll(r.Body); reset(w) })
	truncate   = step(func(w http.ResponseWriter, _ *http.Request) { truncated(w) })
	badJSON200 = status(200, `{"statusCode":200,"data":[{"id":`)
)

// scripted answers with steps in order, repeating the last one.
func scripted(t *testing.T, steps ...step) *server {
	return newServer(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		steps[min(int(n), len(steps))-1](w, r)
	})
}

func TestGetRetries(t *testing.T) {
	tests := []struct {
		name     string
		steps    []step
		wantErr  string // "" for success
		attempts int64  // server hits, -1: at least 2 (the transport may itself retry a reset idle connection)
	}{
		{"500 then success", []step{status(500, `{"messages":"boom"}`), ok}, "", 2},
		{"502 then success", []step{status(502, `<html>bad gateway</html>`), ok}, "", 2},
		{"503 then success", []step{status(503, ``), ok}, "", 2},
		{"429 then success", []step{status(429, `{"messages":"rate limited"}`), ok}, "", 2},
		{"connection reset then success", []step{resetConn, ok}, "", -1},
		{"truncated body then success", []step{truncate, ok}, "", 2},
		{"undecodable 200 then success", []step{badJSON200, ok}, "", 2},
		{"bounded attempts", []step{status(503, `{"messages":"maintenance"}`)},
			"GET /hl/v1/invoice page 2: HTTP 503 Service Unavailable: maintenance (after 3 attempts)", 3},
		{"400 not retried", []step{status(400, `{"messages":"bad sort"}`)}, "GET /hl/v1/invoice page 2: HTTP 400 Bad Request: bad sort", 1},
		{"401 not retried", []step{status(401, `{"message":"Unauthorized"}`)}, "HTTP 401 Unauthorized: Unauthorized", 1},
		{"403 not retried", []step{status(403, ``)}, "HTTP 403 Forbidden", 1},
		{"404 not retried", []step{status(404, `not here`)}, `HTTP 404 Not Found: body "not here"`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scripted(t, tt.steps...)
			c := newClient(t, fastConfig(s.URL))
			p, err := c.List(context.Background(), "/hl/v1/invoice", values("page", "2"))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error: %v", err)
			case tt.wantErr == "" && len(p.Items) != 1:
				t.Fatalf("page %+v", p)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if tt.wantErr != "" {
				var ae *APIError
				if !errors.As(err, &ae) {
					t.Errorf("%T is not an *APIError", err)
				}
			}
			hits := s.hits.Load()
			if tt.attempts == -1 && hits < 2 || tt.attempts > 0 && hits != tt.attempts {
				t.Errorf("%d attempts, want %d", hits, tt.attempts)
			}
		})
	}
}

// TestPostRetryPolicy: a write goes again only when the service cannot have acted on it.
func TestPostRetryPolicy(t *testing.T) {
	created := status(200, string(body(t, "Invoices__invoice-create-response.json")))
	tests := []struct {
		name     string
		steps    []step
		unknown  bool // IsUnknownOutcome
		apiErr   bool // an *APIError is in the chain
		success  bool
		attempts int64
	}{
		{"500 not retried, outcome unknown", []step{status(500, `{"messages":"oops"}`), created}, true, true, false, 1},
		{"502 not retried, outcome unknown", []step{status(502, ``), created}, true, true, false, 1},
		{"reset after the request was sent", []step{resetConn, created}, true, false, false, 1},
		{"truncated answer", []step{truncate, created}, true, false, false, 1},
		{"undecodable 200", []step{badJSON200, created}, true, false, false, 1},
		{"200 without data", []step{status(200, `{"statusCode":200,"messages":"success"}`), created}, true, false, false, 1},
		{"200 without an id", []step{status(200, `{"statusCode":200,"data":{"link":"x"}}`), created}, true, false, false, 1},
		{"statusCode 500 in a 200", []step{status(200, `{"statusCode":500,"messages":"db"}`), created}, true, true, false, 1},
		{"429 retried", []step{status(429, `{"messages":"slow down"}`), created}, false, false, true, 2},
		{"400 refused", []step{status(400, `{"messages":"email invalid"}`), created}, false, true, false, 1},
		{"statusCode 400 in a 200 refused", []step{status(200, `{"statusCode":400,"messages":"email invalid"}`)}, false, true, false, 1},
		{"429 every time", []step{status(429, ``)}, false, true, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scripted(t, tt.steps...)
			c := newClient(t, fastConfig(s.URL))
			inv, err := c.CreateInvoice(context.Background(), sampleInvoice())
			if tt.success {
				if err != nil || inv.ID != "df65d192-8396-4f9a-b4e5-8244648c07c5" {
					t.Fatalf("got %+v, %v", inv, err)
				}
			} else if err == nil {
				t.Fatal("no error")
			}
			if got := IsUnknownOutcome(err); got != tt.unknown {
				t.Errorf("IsUnknownOutcome = %v, want %v (%v)", got, tt.unknown, err)
			}
			var ae *APIError
			if got := errors.As(err, &ae); got != tt.apiErr {
				t.Errorf("APIError in chain = %v, want %v (%v)", got, tt.apiErr, err)
			}
			if err != nil && !strings.Contains(err.Error(), "POST /hl/v1/invoice/create") {
				t.Errorf("error %q does not name the call", err)
			}
			if n := s.hits.Load(); n != tt.attempts {
				t.Errorf("%d attempts, want %d", n, tt.attempts)
			}
		})
	}
}

// TestPostRetriedBeforeSending: a refused connection means the service never saw the write.
func TestPostRetriedBeforeSending(t *testing.T) {
	s := newServer(t, func(int64, http.ResponseWriter, *http.Request) {})
	base := s.URL
	s.Close()
	c := newClient(t, fastConfig(base))
	_, err := c.AddCredit(context.Background(), AddCreditRequest{CustomerID: "c", ProductID: "p", Amount: 5})
	if err == nil || IsUnknownOutcome(err) {
		t.Fatalf("error %v: want a known failure", err)
	}
	if !strings.Contains(err.Error(), "POST /credit/v1/credit/customer/add-credit: ") || !strings.Contains(err.Error(), "(after 3 attempts)") {
		t.Errorf("error %q", err)
	}
	if st := c.Stats(); st.Requests != 3 || st.Retries != 2 || st.Errors != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestRequestTimeout: each attempt has its own deadline; a slow GET is retried, a slow POST is unknown.
func TestRequestTimeout(t *testing.T) {
	slowThenOK := func(n int64, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			io.ReadAll(r.Body) // the server notices a closed connection only once the body is read
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		if r.Method == http.MethodPost {
			writeJSON(w, 200, []byte(`{"statusCode":200,"messages":"sukses"}`))
			return
		}
		writeJSON(w, 200, []byte(okPage))
	}
	s := newServer(t, slowThenOK)
	cfg := fastConfig(s.URL)
	cfg.RequestTimeout = 100 * time.Millisecond
	if _, err := newClient(t, cfg).List(context.Background(), "/hl/v1/customer", nil); err != nil {
		t.Fatalf("GET: %v", err)
	}
	if s.hits.Load() != 2 {
		t.Errorf("GET: %d attempts, want 2", s.hits.Load())
	}

	s2 := newServer(t, slowThenOK)
	cfg.BaseURL = s2.URL
	_, err := newClient(t, cfg).UpdateCustomerEmail(context.Background(), "a@x.id", "b@x.id")
	if !IsUnknownOutcome(err) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no complete answer within 100ms") {
		t.Errorf("POST: %v", err)
	}
	if s2.hits.Load() != 1 {
		t.Errorf("POST: %d attempts, want 1", s2.hits.Load())
	}
}

// TestCancel: cancelling the caller's context stops any wait at once.
func TestCancel(t *testing.T) {
	t.Run("during backoff", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s := scripted(t, status(503, ``))
		cfg := fastConfig(s.URL)
		cfg.MinBackoff, cfg.MaxBackoff = time.Hour, time.Hour
		c := newClient(t, cfg)
		c.clk = cancelDuringSleep{cancel}
		start := time.Now()
		_, err := c.List(ctx, "/hl/v1/invoice", nil)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "HTTP 503") {
			t.Errorf("error %v", err)
		}
		if time.Since(start) > 30*time.Second {
			t.Error("cancel did not stop the backoff")
		}
		if s.hits.Load() != 1 {
			t.Errorf("%d attempts", s.hits.Load())
		}
	})
	t.Run("waiting for the rate limiter", func(t *testing.T) {
		s := scripted(t, ok)
		cfg := fastConfig(s.URL)
		cfg.Unlimited, cfg.RatePerMin = false, 1 // one request a minute
		c := newClient(t, cfg)
		if _, err := c.List(context.Background(), "/hl/v1/invoice", nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.List(ctx, "/hl/v1/invoice", nil)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the rate limiter") {
			t.Errorf("error %v", err)
		}
		if s.hits.Load() != 1 {
			t.Errorf("%d requests reached the server, want 1", s.hits.Load())
		}
	})
	t.Run("during a request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s := newServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			cancel()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		})
		_, err := newClient(t, fastConfig(s.URL)).ActivateLicense(ctx, "LIC", "p1")
		if !errors.Is(err, context.Canceled) || !IsUnknownOutcome(err) {
			t.Errorf("error %v: a cancelled write that was sent has an unknown outcome", err)
		}
		if s.hits.Load() != 1 {
			t.Errorf("%d attempts", s.hits.Load())
		}
	})
}

// TestRetryAfter checks the wait asked for is the minimum wait, on a fake clock.
func TestRetryAfter(t *testing.T) {
	serverNow := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC) // a simulated clock far from the client's
	tests := []struct {
		name    string
		first   step
		minWait time.Duration
		maxWait time.Duration
		retried bool
	}{
		{"429 seconds", withHeader("Retry-After", "2", status(429, ``)), 2 * time.Second, 2*time.Second + 10*time.Millisecond, true},
		{"429 HTTP date against the answer's Date", withHeader("Date", serverNow.Format(http.TimeFormat),
			withHeader("Retry-After", serverNow.Add(5*time.Second).Format(http.TimeFormat), status(429, ``))),
			5 * time.Second, 5*time.Second + 10*time.Millisecond, true},
		{"503 seconds", withHeader("Retry-After", "3", status(503, ``)), 3 * time.Second, 3*time.Second + 10*time.Millisecond, true},
		{"unparseable Retry-After falls back to backoff", withHeader("Retry-After", "soon", status(503, ``)), 0, 10 * time.Millisecond, true},
		{"longer than MaxRetryAfter: give up", withHeader("Retry-After", "120", status(429, ``)), 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scripted(t, tt.first, ok)
			cfg := fastConfig(s.URL)
			cfg.MaxRetryAfter = time.Minute
			c := newClient(t, cfg)
			clk := useFakeClock(c)
			_, err := c.List(context.Background(), "/hl/v1/invoice", nil)
			if !tt.retried {
				var ae *APIError
				if !errors.As(err, &ae) || ae.Status != 429 || ae.RetryAfter != 2*time.Minute {
					t.Fatalf("error %v, want the 429 with its Retry-After", err)
				}
				if s.hits.Load() != 1 {
					t.Errorf("%d attempts", s.hits.Load())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			waits := clk.waits()
			if len(waits) == 0 {
				t.Fatal("no wait before the retry")
			}
			if w := waits[0]; w < tt.minWait || w > tt.maxWait {
				t.Errorf("waited %s, want %s..%s", w, tt.minWait, tt.maxWait)
			}
		})
	}
}

// TestThrottlePausesWholeClient: after a 429 no request of any goroutine goes before Retry-After.
func TestThrottlePausesWholeClient(t *testing.T) {
	s := newServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hl/v1/invoice" {
			w.Header().Set("Retry-After", "7")
			writeJSON(w, 429, nil)
			return
		}
		writeJSON(w, 200, []byte(okPage))
	})
	cfg := fastConfig(s.URL)
	cfg.MaxAttempts = 1
	c := newClient(t, cfg)
	clk := useFakeClock(c)
	if _, err := c.List(context.Background(), "/hl/v1/invoice", nil); err == nil {
		t.Fatal("want the 429")
	}
	if len(clk.waits()) != 0 {
		t.Fatal("waited before the 429")
	}
	if _, err := c.List(context.Background(), "/hl/v1/customer", nil); err != nil {
		t.Fatal(err)
	}
	waits := clk.waits()
	if len(waits) != 1 || waits[0] != 7*time.Second {
		t.Errorf("another request waited %v, want exactly the 7s pause", waits)
	}
	if st := c.Stats(); st.Throttled != 1 || st.Requests != 2 || st.Errors != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestLimiterReserve(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	type op struct {
		at    time.Duration // since t0
		pause time.Duration // >0: pause until t0+pause instead of reserving
		want  time.Duration
	}
	tests := []struct {
		name   string
		perMin float64
		ops    []op
	}{
		{"20 per minute is one every 3s", 20, []op{{0, 0, 0}, {0, 0, 3 * time.Second}, {0, 0, 6 * time.Second}, {time.Second, 0, 8 * time.Second}}},
		{"idle time is not banked", 20, []op{{0, 0, 0}, {time.Minute, 0, 0}, {time.Minute, 0, 3 * time.Second}}},
		{"pause holds the next slot", 20, []op{{0, 0, 0}, {0, 10 * time.Second, 0}, {time.Second, 0, 9 * time.Second}, {time.Second, 0, 12 * time.Second}}},
		{"unlimited still pauses", 0, []op{{0, 0, 0}, {0, 0, 0}, {0, 4 * time.Second, 0}, {0, 0, 4 * time.Second}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(realClock{}, tt.perMin)
			for i, o := range tt.ops {
				if o.pause > 0 {
					l.pause(t0.Add(o.pause))
					continue
				}
				if got, _ := l.reserve(t0.Add(o.at)); got != o.want {
					t.Errorf("op %d: wait %s, want %s", i, got, o.want)
				}
			}
		})
	}
}

// TestRateLimitAcrossGoroutines: N requests at rate R from several goroutines take at least (N-1)/R.
func TestRateLimitAcrossGoroutines(t *testing.T) {
	s := scripted(t, ok)
	cfg := fastConfig(s.URL)
	cfg.Unlimited, cfg.RatePerMin = false, 1200 // one every 50ms
	c := newClient(t, cfg)
	const n = 6
	start := time.Now()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range n / 3 {
				if _, err := c.List(context.Background(), "/hl/v1/invoice", nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if d := time.Since(start); d < (n-1)*50*time.Millisecond {
		t.Errorf("%d requests took %s, the limiter allows no less than %s", n, d, (n-1)*50*time.Millisecond)
	}
	if s.hits.Load() != n {
		t.Errorf("%d requests", s.hits.Load())
	}
}

// cancelDuringSleep is the real clock, except that a sleep in progress gets its context cancelled shortly.
type cancelDuringSleep struct{ cancel context.CancelFunc }

func (cancelDuringSleep) Now() time.Time { return time.Now() }

func (c cancelDuringSleep) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		time.AfterFunc(10*time.Millisecond, c.cancel)
	}
	return realClock{}.Sleep(ctx, d)
}

func TestBackoff(t *testing.T) {
	c := newClient(t, Config{BaseURL: "http://x.test", APIKey: testKey, MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	for n, ceil := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 80: time.Second} {
		for range 50 {
			if d := c.backoff(n); d < ceil/2 || d > ceil {
				t.Fatalf("attempt %d: backoff %s outside %s..%s", n, d, ceil/2, ceil)
			}
		}
	}
}

// TestKeyRefusedOnce: a 401 is about the key: it says so with the host, and every later call, on
// any endpoint, fails with that same error without being sent.
func TestKeyRefusedOnce(t *testing.T) {
	s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 401, []byte(`{"statusCode":401,"messages":"Unauthorized"}`))
	})
	c := newClient(t, fastConfig(s.URL))
	_, err1 := c.List(context.Background(), "/hl/v1/customer", nil)
	_, err2 := c.List(context.Background(), "/hl/v1/invoice", nil)
	if !IsAuthFailure(err1) || err2 == nil || err2.Error() != err1.Error() {
		t.Fatalf("errors %v / %v: want the same refusal twice", err1, err2)
	}
	if want := s.URL + " refused the API key (HTTP 401 Unauthorized: Unauthorized)"; err1.Error() != want {
		t.Errorf("error %q, want %q", err1, want)
	}
	if IsUnavailable(err1) {
		t.Error("a refused key taken for an unavailable service")
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("%d requests sent, want 1: the second call knew the key was refused", n)
	}
}

// TestSilenceIsTheClients: calls that start late (queued behind others) give up when the service
// has said nothing for UnreachableAfter since the client's first request, and the message's figure
// is that time, not each call's own.
func TestSilenceIsTheClients(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: every attempt is refused at once
	cfg := fastConfig("http://" + addr)
	cfg.MaxAttempts = 1000
	// Wide margins: a silence older than UnreachableAfter is forgotten (a stopped run), so the
	// sleep below must end well within it even on a loaded machine (300 ms once flaked there).
	cfg.UnreachableAfter = 1500 * time.Millisecond
	cfg.MinBackoff, cfg.MaxBackoff = 20*time.Millisecond, 40*time.Millisecond
	c := newClient(t, cfg)
	if _, err := c.List(context.Background(), "/hl/v1/customer", nil); err == nil {
		t.Fatal("no error")
	}
	time.Sleep(200 * time.Millisecond) // a call queued this long behind the first
	start := time.Now()
	_, err = c.List(context.Background(), "/hl/v1/invoice", nil)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "no answer to any request for ") {
		t.Fatalf("second call: %v", err)
	}
	// the second call gives up on its first failure: the service has been silent for 1.7 s;
	// measuring its own silence would take the whole 1.5 s
	if took > cfg.UnreachableAfter/2 {
		t.Errorf("the second call took %s: it measured its own silence", took)
	}
	if !IsUnavailable(err) {
		t.Errorf("%v not taken for an unavailable service", err)
	}
}

// TestQueuedCallsGiveUpWithTheService: calls queued at the rate limiter behind others' retries do
// not each wait their turn to find the service silent: they all end once it has said nothing for
// UnreachableAfter, so a run ends near the time its message states.
func TestQueuedCallsGiveUpWithTheService(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := fastConfig("http://" + addr)
	cfg.Unlimited, cfg.RatePerMin = false, 60 // a turn a second: four calls' turns take seconds
	cfg.MaxAttempts = 100
	cfg.UnreachableAfter = 500 * time.Millisecond
	c := newClient(t, cfg)
	start := time.Now()
	errs := make(chan error, 4)
	for _, p := range []string{"/hl/v1/customer", "/hl/v1/invoice", "/hl/v1/reviews", "/hl/v1/payment"} {
		go func() {
			_, err := c.List(context.Background(), p, nil)
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err == nil || !strings.Contains(err.Error(), "no answer to any request for ") {
			t.Errorf("call: %v", err)
		}
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the calls took %s to give up on a service silent for 500ms", took)
	}
}

// TestGivenUpEndsTheOtherCalls: once a call has given the service up (its attempts spent, nothing
// answering), the client's other calls end with it instead of each spending their own attempts,
// so the run ends near the figure its message states; a call after the silence allowed (the
// daemon's next run) tries again.
func TestGivenUpEndsTheOtherCalls(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := fastConfig("http://" + addr)
	cfg.MaxAttempts = 4
	cfg.MinBackoff, cfg.MaxBackoff = 100*time.Millisecond, 400*time.Millisecond
	cfg.UnreachableAfter = 2 * time.Second
	c := newClient(t, cfg)
	if _, err := c.List(context.Background(), "/hl/v1/customer", nil); err == nil || !strings.Contains(err.Error(), "(after 4 attempts)") {
		t.Fatalf("first call: %v", err)
	}
	start := time.Now()
	_, err = c.List(context.Background(), "/hl/v1/invoice", nil)
	if err == nil || !strings.Contains(err.Error(), "not sent: the service has answered nothing") || time.Since(start) > 50*time.Millisecond {
		t.Errorf("a call after the first gave up: %v after %s, want it ended at once", err, time.Since(start))
	}
	time.Sleep(2 * time.Second)
	if _, err = c.List(context.Background(), "/hl/v1/reviews", nil); err == nil || strings.Contains(err.Error(), "not sent") {
		t.Errorf("a call after the silence allowed: %v, want it sent again", err)
	}
}
