package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/fetch"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgressLog: off a terminal, a running sync logs one progress record per interval with
// the totals so far (finished streams included) and nothing once it is over.
func TestProgressLog(t *testing.T) {
	var out lockedBuffer
	p := newProgressLog(slog.New(slog.NewJSONHandler(&out, nil)), 20*time.Millisecond)
	p.update(fetch.Progress{Stream: "customers", Records: 100, Pages: 1})
	p.update(fetch.Progress{Stream: "customers", Records: 200, Pages: 2, Done: true})
	p.update(fetch.Progress{Stream: "invoices", Records: 50, Pages: 1})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "sync progress") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.close()
	logs := out.String()
	if !strings.Contains(logs, `"msg":"sync progress","records":250,"pages":3,"running":"invoices"`) {
		t.Fatalf("progress record: %s", logs)
	}
	n := strings.Count(logs, "\n")
	time.Sleep(60 * time.Millisecond)
	if strings.Count(out.String(), "\n") != n {
		t.Errorf("progress logged after close")
	}
}
