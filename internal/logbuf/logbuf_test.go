package logbuf

import (
	"strings"
	"sync"
	"testing"
)

// Run with -race: writers on many goroutines while another reads.
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.Len()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != 800 || b.Len() != 800*5 {
		t.Errorf("%d lines, %d bytes; want 800 lines, 4000 bytes", n, b.Len())
	}
}
