package api

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
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

// limiter is a token bucket (golang.org/x/time/rate) in front of a pause gate. The bucket paces requests
// one every interval, burst 1: a burst of two at the start of a minute would let 21 requests into a
// sliding 60 s window at 20/min. The gate is ours: a 429's Retry-After holds back every request of the
// client, and a request that waited for the gate takes its slot after the pause.
type limiter struct {
	clk      clock
	interval time.Duration // 0: no pacing, pauses only
	bucket   *rate.Limiter

	mu     sync.Mutex
	last   time.Time // latest time a slot was booked from: the bucket must never see time go back
	paused time.Time // no request before this
}

func newLimiter(clk clock, perMin float64) *limiter {
	l := &limiter{clk: clk, bucket: rate.NewLimiter(rate.Inf, 1)}
	if perMin > 0 {
		l.interval = time.Duration(float64(time.Minute) / perMin)
		l.bucket = rate.NewLimiter(rate.Every(l.interval), 1)
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
		at = l.paused // the slot is booked as if asked for when the pause ends
	}
	// rate.Limiter takes a time going back as a reset of its clock (it would hand out slots too soon);
	// concurrent callers read the clock before taking the lock, so keep the times it sees in order.
	if at.Before(l.last) {
		at = l.last
	}
	l.last = at
	// The float arithmetic of the bucket is a few nanoseconds off a whole interval; the
	// microsecond is far below anything the service can tell.
	return l.bucket.ReserveN(at, 1).DelayFrom(now).Round(time.Microsecond), paused
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
