package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// call is one logical request; its attempts share everything here.
type call struct {
	method string
	path   string // spec path, no query
	query  url.Values
	body   []byte // JSON, POST only
	page   string // position for messages: "page 3", "after <cursor>" or ""
	// decode reads a 2xx body, which is only valid during the call. A *bodyStatus error means the body's
	// statusCode disagreed with the HTTP status; any other error means the body was not what was expected.
	decode func(status int, body []byte) error
}

func (cl *call) where() string { return where(cl.method, cl.path, cl.page) }

// writes are the calls that must never be repeated once the service may have seen them.
func (cl *call) write() bool { return cl.method != http.MethodGet }

// outcome of one attempt.
type outcome struct {
	err        error
	retry      bool
	retryAfter time.Duration // the service's minimum wait before the next attempt
	cause      string        // short reason for a retry's log line: "HTTP 503", "429 Retry-After", "connection refused"
	noAnswer   bool          // the service did not answer at all
}

// do runs cl with retries and counts and redacts its final error.
func (c *Client) do(ctx context.Context, cl *call) error {
	err := c.run(ctx, cl)
	if err == nil {
		return nil
	}
	c.errs.Add(1)
	if msg := err.Error(); c.redact(msg) != msg {
		err = &redactedError{msg: c.redact(msg), err: err}
	}
	return err
}

func (c *Client) run(ctx context.Context, cl *call) error {
	var last error
	if a := c.keyRefused.Load(); a != nil {
		// The key was refused: every call would be, and each would say so again.
		return a.again(cl)
	}
	c.forgetStaleSilence()
	for n := 1; ; n++ {
		if c.givenUp() {
			// Another call gave the service up and nothing has answered since: this one would
			// only spend its own attempts to learn the same, and the run end long after its
			// message's figure.
			if last == nil {
				last = fmt.Errorf("%s: not sent: %w", cl.where(), errGaveUp)
			}
			return c.giveUp(c.clk.Now().Sub(c.silentSince()), last, n-1)
		}
		if err := c.limiterTurn(ctx, cl); err != nil {
			if errors.Is(err, errGaveUp) {
				if last == nil {
					last = fmt.Errorf("%s: not sent: %w", cl.where(), err)
				}
				return c.giveUp(c.clk.Now().Sub(c.silentSince()), last, n-1)
			}
			if last != nil {
				return fmt.Errorf("%w; stopped waiting for the rate limiter: %w", attemptsNote(last, n-1), err)
			}
			return fmt.Errorf("%s: waiting for the rate limiter: %w", cl.where(), err)
		}
		o := c.attempt(ctx, cl, n)
		if o.err == nil {
			return nil
		}
		if o.noAnswer {
			// No answer at all: a service that has said nothing, to any call, for c.unreachable is
			// not reachable; stop rather than spend minutes on the remaining attempts. Silence is
			// the client's, not this call's: calls queued behind the rate limiter start late, and
			// measured alone each would take its own full bound, so a run would wait far longer
			// than the figure its message states.
			silent := c.clk.Now().Sub(c.silentSince())
			if !o.retry || n >= c.maxAttempts || silent >= c.unreachable {
				return c.giveUp(silent, o.err, n)
			}
		} else if !o.retry || n >= c.maxAttempts {
			return attemptsNote(o.err, n)
		}
		last = o.err
		wait := max(c.backoff(n), o.retryAfter)
		if o.noAnswer {
			wait = max(min(wait, c.unreachable-c.clk.Now().Sub(c.silentSince())), 0)
		}
		cause := "retry after " + o.cause
		if o.cause == "429 Retry-After" {
			cause = o.cause // the service's own wait, not a guess
		}
		c.noteWait(ctx, cl, wait, cause, slog.LevelInfo, slog.Int("attempt", n),
			slog.String("err", c.redact(o.err.Error())))
		sctx, stop := c.until(ctx, c.downChan())
		err := c.clk.Sleep(sctx, wait)
		stop()
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("%w; stopped waiting to retry: %w", attemptsNote(last, n), err)
		}
		c.retries.Add(1)
	}
}

// limiterTurn waits for the call's turn at the rate limiter. While the service answers nothing,
// the wait ends with errGaveUp once it has been silent for c.unreachable: calls queued behind
// others' retries would otherwise each wait their turn to learn the same, and the run end many
// seconds after the time its message states.
func (c *Client) limiterTurn(ctx context.Context, cl *call) error {
	report := func(d time.Duration, paused bool) { c.limiterWait(ctx, cl, d, paused) }
	for {
		if c.givenUp() {
			return errGaveUp
		}
		failing, fell := c.failState()
		if !failing {
			// Wait, but stop waiting when the service falls silent meanwhile: the wait is then
			// bounded by the silence allowed (below). The booked turn is left unused.
			wctx, cancel := c.until(ctx, fell)
			err := c.lim.wait(wctx, report)
			cancel()
			if err == nil || ctx.Err() != nil {
				return err
			}
			continue
		}
		silentUntil := c.silentSince().Add(c.unreachable)
		if !c.clk.Now().Before(silentUntil) {
			return errGaveUp
		}
		dctx, dcancel := context.WithDeadline(ctx, silentUntil)
		wctx, cancel := c.until(dctx, c.downChan())
		err := c.lim.wait(wctx, report)
		cancel()
		dcancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
		// the deadline passed: give up if still nothing has answered, else wait again
	}
}

// limiterWait reports a wait for the rate limiter: after a 429 it is the service's pause; otherwise
// the client's own pace. At a realistic rate most requests queue, so each wait is logged at Debug
// and the log gets a summary at most once a minute (waitTally); the 429 itself is logged where it
// is retried.
func (c *Client) limiterWait(ctx context.Context, cl *call, d time.Duration, paused bool) {
	cause := fmt.Sprintf("rate limit %g/min", c.ratePerMin)
	if paused {
		cause = "429 Retry-After"
	}
	c.noteWait(ctx, cl, d, cause, slog.LevelDebug)
	if sum, ok := c.tally.add(c.clk.Now(), d, paused); ok {
		c.logWaits(ctx, sum)
	}
}

// FlushWaits logs the rate-limit waits not yet summed up in the log, at the end of a run.
func (c *Client) FlushWaits(ctx context.Context) {
	if sum, ok := c.tally.flush(c.clk.Now()); ok {
		c.logWaits(ctx, sum)
	}
}

func (c *Client) logWaits(ctx context.Context, s waitSummary) {
	c.log.LogAttrs(ctx, slog.LevelInfo, "api rate limit waits", slog.Int("requests", s.n),
		slog.Int("after_429", s.paused), slog.Duration("longest", s.longest), slog.Duration("total", s.total),
		slog.Duration("over", s.over), slog.String("limit", fmt.Sprintf("%g/min", c.ratePerMin)))
}

// waitTally sums the limiter's waits for the summary line.
type waitTally struct {
	mu    sync.Mutex
	since time.Time // start of the current window; zero when nothing waited since the last line
	sum   waitSummary
}

type waitSummary struct {
	n, paused      int // requests that waited; of them, behind a 429's pause
	longest, total time.Duration
	over           time.Duration // the window the line sums up
}

// waitSummaryEvery is the most often the log sums up the limiter's waits.
const waitSummaryEvery = time.Minute

// add counts a wait starting at now; it returns the window's summary once the window is a
// minute old.
func (t *waitTally) add(now time.Time, d time.Duration, paused bool) (waitSummary, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.since.IsZero() {
		t.since = now
	}
	t.sum.n++
	if paused {
		t.sum.paused++
	}
	t.sum.total += d
	t.sum.longest = max(t.sum.longest, d)
	if now.Sub(t.since) < waitSummaryEvery {
		return waitSummary{}, false
	}
	return t.take(now), true
}

func (t *waitTally) flush(now time.Time) (waitSummary, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sum.n == 0 {
		return waitSummary{}, false
	}
	return t.take(now), true
}

func (t *waitTally) take(now time.Time) waitSummary {
	s := t.sum
	s.over = now.Sub(t.since)
	t.sum, t.since = waitSummary{}, time.Time{}
	return s
}

// noteWait logs a wait with its cause and delay and tells OnWait of the long ones.
func (c *Client) noteWait(ctx context.Context, cl *call, d time.Duration, cause string, level slog.Level, attrs ...slog.Attr) {
	if c.onWait != nil && (level >= slog.LevelInfo || d >= WaitNotice) {
		c.onWait(Wait{Delay: d, Cause: cause, Where: cl.where()})
	}
	if !c.log.Enabled(ctx, level) {
		return
	}
	attrs = append([]slog.Attr{slog.String("method", cl.method), slog.String("path", cl.path),
		slog.String("page", cl.page), slog.String("cause", cause), slog.Duration("delay", d)}, attrs...)
	c.log.LogAttrs(ctx, level, "api waiting", attrs...)
}

// silentSince is when the service last answered, or the client first sent a request when it
// never has.
func (c *Client) silentSince() time.Time {
	return time.Unix(0, c.lastAnswer.Load())
}

// until is ctx, also cancelled when ch closes.
func (c *Client) until(ctx context.Context, ch <-chan struct{}) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-wctx.Done():
		}
	}()
	return wctx, cancel
}

// givenUp says whether a call gave the service up as unreachable, nothing has answered since,
// and that was within the silence allowed: a later call (the daemon's next run) tries again.
func (c *Client) givenUp() bool {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	return c.givenUpLocked()
}

// givenUpLocked is givenUp with failMu held; an expired verdict is cleared.
func (c *Client) givenUpLocked() bool {
	if c.down && c.clk.Now().Sub(c.downAt) >= c.unreachable {
		c.down, c.downCh = false, make(chan struct{})
	}
	return c.down
}

// downChan is closed when a call gives the service up.
func (c *Client) downChan() <-chan struct{} {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	return c.downCh
}

// forgetStaleSilence starts the reachability state afresh when the latest attempt without an
// answer ended longer than the silence allowed ago (a stopped run, the daemon's previous run):
// what was silent then says nothing now, and a call must try before anything is concluded.
func (c *Client) forgetStaleSilence() {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	if !c.failing || c.clk.Now().Sub(c.failedAt) < c.unreachable {
		return
	}
	c.failing, c.fell = false, make(chan struct{})
	if c.down {
		c.down, c.downCh = false, make(chan struct{})
	}
	c.lastAnswer.Store(0) // the next attempt starts the silence
}

// setFailing records whether the latest attempt to end got no answer at all; the channel of
// failState is closed when it turns true.
func (c *Client) setFailing(v bool) {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	switch {
	case v && !c.failing:
		close(c.fell)
	case !v && c.failing:
		c.fell = make(chan struct{})
	}
	c.failing = v
	if v {
		c.failedAt = c.clk.Now()
	}
	if !v && c.down {
		c.down, c.downCh = false, make(chan struct{}) // it answers again
	}
}

// failState says whether the service is answering nothing, and gives a channel closed when it
// stops answering.
func (c *Client) failState() (bool, <-chan struct{}) {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	return c.failing, c.fell
}

// errGaveUp is a call not sent: the service had answered nothing for the silence allowed.
var errGaveUp = errors.New("the service has answered nothing, to any call, for the time allowed")

// giveUp ends a call that got no answer, and every other call of the client with it until the
// service answers again.
func (c *Client) giveUp(silent time.Duration, err error, attempts int) error {
	c.failMu.Lock()
	if !c.givenUpLocked() {
		c.down, c.downAt = true, c.clk.Now()
		close(c.downCh)
	}
	c.failMu.Unlock()
	return attemptsNote(&unreachableError{host: c.origin(), silent: silent, err: err}, attempts)
}

// unreachableError is a call that got no answer from the service.
type unreachableError struct {
	host   string
	silent time.Duration
	err    error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s (no answer to any request for %s): %v", e.host, e.silent.Round(time.Second), e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

// backoff is the jittered exponential wait after failed attempt n: half fixed, half random, so that clients
// failing together do not retry together.
func (c *Client) backoff(n int) time.Duration {
	d := c.minBackoff
	for i := 1; i < n && d < c.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.maxBackoff)
	return d/2 + rand.N(d/2+1)
}

func (c *Client) attempt(ctx context.Context, cl *call, n int) outcome {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// Whether the request left this process decides if a failed write may be sent again.
	var wrote atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	})
	req, err := c.newRequest(actx, cl)
	if err != nil {
		return outcome{err: fmt.Errorf("%s: %w", cl.where(), err)}
	}
	c.requests.Add(1)
	start := time.Now()
	c.lastAnswer.CompareAndSwap(0, c.clk.Now().UnixNano()) // the first attempt starts the silence
	resp, err := c.http.Do(req)
	if err != nil {
		o := c.failed(ctx, actx, cl, err, wrote.Load(), false)
		if o.noAnswer {
			c.setFailing(true)
		}
		c.logAttempt(ctx, cl, n, 0, start, o.err)
		return o
	}
	arrived := c.clk.Now()
	c.lastAnswer.Store(arrived.UnixNano())
	c.setFailing(false)
	buf := getBuf()
	defer putBuf(buf)
	readErr := readBody(resp.Body, buf)
	resp.Body.Close()
	c.noteDate(resp.Header, time.Now()) // the machine's clock, whatever clock paces the client
	o := c.answered(ctx, actx, cl, resp, buf.Bytes(), readErr)
	c.logAttempt(ctx, cl, n, resp.StatusCode, start, o.err)
	return o
}

func (c *Client) newRequest(ctx context.Context, cl *call) (*http.Request, error) {
	u := c.base + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, body)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// failed classifies an attempt that got no complete answer.
func (c *Client) failed(ctx, actx context.Context, cl *call, err error, wrote, answered bool) outcome {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL would repeat the query string in every message
	}
	if ctx.Err() != nil {
		e := fmt.Errorf("%s: %w", cl.where(), ctx.Err())
		if cl.write() && wrote {
			return outcome{err: &unknownOutcomeError{e}}
		}
		return outcome{err: e}
	}
	cause := transportCause(err)
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no complete answer within %s: %w", c.timeout, context.DeadlineExceeded)
		cause = "timeout"
	}
	e := fmt.Errorf("%s: %w", cl.where(), err)
	if cl.write() && wrote {
		return outcome{err: &unknownOutcomeError{e}}
	}
	return outcome{err: e, retry: true, cause: cause, noAnswer: !answered}
}

// transportCause names a transport failure briefly, for the retry log line.
func transportCause(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return "connection closed"
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return "DNS lookup failed"
	}
	return "network error"
}

// answered classifies an attempt that got a status line.
func (c *Client) answered(ctx, actx context.Context, cl *call, resp *http.Response, body []byte, readErr error) outcome {
	status := resp.StatusCode
	if status >= 200 && status < 300 {
		if readErr != nil {
			o := c.failed(ctx, actx, cl, fmt.Errorf("read body: %w", readErr), true, true)
			o.cause = "a cut body"
			return o
		}
		err := cl.decode(status, body)
		if err == nil {
			return outcome{}
		}
		var enc *EncodingError
		if errors.As(err, &enc) {
			// the service's data, not a fault of this answer: the same bytes come again
			return outcome{err: fmt.Errorf("%s: %w", cl.where(), err)}
		}
		var bs *bodyStatus
		if !errors.As(err, &bs) {
			if why := foreignBody(resp.Header, body); why != "" {
				err = &ForeignAnswer{Why: why, err: err}
			}
			e := fmt.Errorf("%s: decode: %w", cl.where(), err)
			if cl.write() {
				return outcome{err: &unknownOutcomeError{e}}
			}
			return outcome{err: e, retry: true, cause: "an undecodable answer"}
		}
		apiErr := &APIError{Method: cl.method, Path: cl.path, Page: cl.page, Status: bs.status, InBody: true,
			Message: c.redact(bs.message)}
		return c.refused(cl, apiErr, resp.Header)
	}
	if status >= 300 && status < 400 {
		// the redirect policy stopped here: following would send the key, or a write, elsewhere
		e := fmt.Errorf("%s: %w", cl.where(), c.redirected(resp, cl.method))
		if cl.write() {
			return outcome{err: &unknownOutcomeError{e}}
		}
		return outcome{err: e}
	}
	// The body is redacted whole before it is cut to a snippet, so no cut leaves part of the key.
	apiErr := &APIError{Method: cl.method, Path: cl.path, Page: cl.page, Status: status,
		Message: c.redact(errorMessage([]byte(c.redact(string(body))))), Foreign: foreignError(resp.Header, body)}
	return c.refused(cl, apiErr, resp.Header)
}

// refused classifies an answer that was not a success.
func (c *Client) refused(cl *call, e *APIError, h http.Header) outcome {
	now := c.clk.Now()
	e.RetryAfter = retryAfter(h, now)
	switch {
	case e.Status == http.StatusUnauthorized:
		a := &AuthError{Host: c.origin(), First: e}
		if !c.keyRefused.CompareAndSwap(nil, a) {
			a = c.keyRefused.Load()
		}
		return outcome{err: a}
	case e.Status == http.StatusTooManyRequests && cl.write() && IsDuplicateRequest(e):
		return outcome{err: e} // about this write, not a rate limit: the caller reconciles, never retries
	case e.Status == http.StatusTooManyRequests:
		// The service did nothing, so even a write may go again, after the whole client has paused.
		c.throttled.Add(1)
		pause := max(e.RetryAfter, c.minBackoff)
		if e.RetryAfter > c.maxRetryAft {
			c.lim.pause(now.Add(c.maxRetryAft))
			c.log.Warn("api throttled: Retry-After too long, giving up", "method", e.Method, "path", e.Path,
				"retry_after", e.RetryAfter)
			return outcome{err: e}
		}
		c.lim.pause(now.Add(pause))
		return outcome{err: e, retry: true, retryAfter: e.RetryAfter, cause: "429 Retry-After"}
	case e.Status >= 500:
		if cl.write() {
			return outcome{err: &unknownOutcomeError{e}}
		}
		if e.RetryAfter > c.maxRetryAft {
			return outcome{err: e}
		}
		return outcome{err: e, retry: true, retryAfter: e.RetryAfter, cause: "HTTP " + strconv.Itoa(e.Status)}
	}
	return outcome{err: e}
}

// retryAfter reads Retry-After as seconds or as an HTTP date. A date is measured against the answer's own Date
// header when present, so a service on a simulated clock still gets the wait it meant.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, 1<<31)) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if d, err := http.ParseTime(h.Get("Date")); err == nil {
		now = d
	}
	return max(t.Sub(now), 0)
}

func (c *Client) logAttempt(ctx context.Context, cl *call, n, status int, start time.Time, err error) {
	if !c.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", cl.method), slog.String("path", cl.path), slog.String("page", cl.page),
		slog.Int("status", status), slog.Int("attempt", n), slog.Duration("duration", time.Since(start)),
	}
	if err != nil {
		attrs = append(attrs, slog.String("err", c.redact(err.Error())))
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "api request", attrs...)
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer { return bufPool.Get().(*bytes.Buffer) }

func putBuf(b *bytes.Buffer) {
	if b.Cap() > 4<<20 {
		return // let an unusually large page's buffer go rather than pin it
	}
	b.Reset()
	bufPool.Put(b)
}

func readBody(r io.Reader, buf *bytes.Buffer) error {
	if _, err := buf.ReadFrom(io.LimitReader(r, maxBody+1)); err != nil {
		return err
	}
	if buf.Len() > maxBody {
		return fmt.Errorf("body larger than %d MiB", maxBody>>20)
	}
	return nil
}
