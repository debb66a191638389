package api

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/logbuf"
	gojson "github.com/goccy/go-json"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testKey is distinctive so that a leak is found by a plain substring search.
const testKey = "sk_test_Zq7LEAKCANARY93xw"

// codecs are the decoders the decoding tests run with: the package must give the same results with both.
var codecs = []struct {
	name string
	fn   func([]byte, any) error
}{
	{"goccy", gojson.Unmarshal},
	{"encoding-json", json.Unmarshal},
}

// withCodecs runs f once per decoder. Tests using it must not run in parallel: the decoder is package state.
func withCodecs(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := unmarshal
	t.Cleanup(func() { unmarshal = saved })
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			unmarshal = c.fn
			defer func() { unmarshal = saved }()
			f(t)
		})
	}
}

// fastConfig retries quickly and does not pace, so tests take milliseconds.
func fastConfig(baseURL string) Config {
	return Config{
		BaseURL:     baseURL,
		APIKey:      testKey,
		Unlimited:   true,
		MaxAttempts: 3,
		MinBackoff:  time.Millisecond,
		MaxBackoff:  2 * time.Millisecond,
	}
}

// server serves h and counts hits.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t testing.TB, h func(n int64, w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(s.hits.Add(1), w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// body reads a response body: a third-party fixture (named <Area>__<file>.json) from the
// repository's testdata/fixtures, any other from testdata/bodies.
func body(t testing.TB, name string) []byte {
	t.Helper()
	dir := filepath.Join("testdata", "bodies")
	if strings.Contains(name, "__") {
		dir = filepath.Join("..", "..", "testdata", "fixtures", "laravel-mayar")
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// reset drops the connection with a TCP RST, as a crashing proxy would.
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// truncated promises a long body and sends a short one, then the server closes the connection.
func truncated(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "5000")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(`{"statusCode":200,"messages":"success","data":[{"id":"a"`))
}

// golden compares got with testdata/golden/<name>, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

// fakeClock advances only when slept on, and records every wait.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func useFakeClock(c *Client) *fakeClock {
	f := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	c.clk = f
	c.lim.clk = f
	return f
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slept = append(f.slept, d)
	f.now = f.now.Add(d)
	return nil
}

func (f *fakeClock) waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.slept...)
}

// captureLogs returns a Debug logger writing into a buffer.
func captureLogs() (*slog.Logger, *logbuf.Buffer) {
	b := &logbuf.Buffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
