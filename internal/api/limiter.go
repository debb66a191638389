package api

import (
	"context"
	"sync"
	"time"
)

// clock is the client's notion of time; tests replace it to check waits without sleeping.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, whichever comes first.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// limiter paces requests one every interval (burst 1: a burst of two at the start of a minute would let 21
// requests into a sliding 60 s window at 20/min) and holds every request back while the client is paused
// after a 429.
type limiter struct {
	clk      clock
	interval time.Duration // 0: no pacing, pauses only

	mu     sync.Mutex
	next   time.Time // earliest time the next request may go
	paused time.Time // no request before this
}

func newLimiter(clk clock, perMin float64) *limiter {
	l := &limiter{clk: clk}
	if perMin > 0 {
		l.interval = time.Duration(float64(time.Minute) / perMin)
	}
	return l
}

// wait blocks until the caller may send one request, or ctx is done. report, when set, hears of
// each wait before it starts, with its cause.
func (l *limiter) wait(ctx context.Context, report func(d time.Duration, paused bool)) error {
	for {
		d, paused := l.reserve(l.clk.Now())
		if report != nil && d > 0 {
			report(d, paused)
		}
		if err := l.clk.Sleep(ctx, d); err != nil {
			return err
		}
		// a 429 seen by another request while we slept pauses us too: take a fresh slot after the pause
		if !l.pausedAt(l.clk.Now()) {
			return nil
		}
	}
}

// reserve books the next free slot and returns how long the caller must wait for it, and whether a
// pause after a 429 is why. A caller that gives up waiting leaves its slot unused, which only makes
// the pace more conservative.
func (l *limiter) reserve(now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := now
	paused := l.paused.After(at)
	if paused {
		at = l.paused
	}
	if l.next.After(at) {
		at = l.next
	}
	l.next = at.Add(l.interval)
	return at.Sub(now), paused
}

// pause holds all requests until the given time.
func (l *limiter) pause(until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until.After(l.paused) {
		l.paused = until
	}
}

func (l *limiter) pausedAt(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paused.After(now)
}
