// Package api is billsync's one HTTP client for the billing service: it authenticates, paces and retries
// requests, decodes the service's loosely typed envelopes and hands back list items as their raw bytes.
// It knows nothing of storage, fetch plans or jobs.
package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/billsync/billsync/internal/config"
)

// DefaultRatePerMin is the pace New applies to a zero Config.RatePerMin: BILLSYNC_RATE_PER_MIN's
// default (config.Sync), the real service's pace.
var DefaultRatePerMin = config.Defaults[config.Sync]().RatePerMin

// Defaults applied by New to zero-valued Config fields.
const (
	DefaultMaxAttempts    = 6
	DefaultRequestTimeout = 30 * time.Second
	DefaultMinBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultMaxRetryAfter  = 5 * time.Minute
	DefaultUserAgent      = "billsync"
)

// maxBody bounds a response body held in memory; a list page of 100 products is well under 1 MiB.
const maxBody = 64 << 20

// Config configures a Client. Zero values take the defaults above.
type Config struct {
	// BaseURL is the scheme and host, optionally with a path prefix; spec paths are appended as they stand.
	BaseURL string
	APIKey  string

	// RatePerMin is the client-side request pace shared by every goroutine using the Client.
	// 0 means DefaultRatePerMin unless Unlimited is set, so that "unset" and "no limit" differ.
	RatePerMin float64
	Unlimited  bool

	MaxAttempts    int           // attempts per call for retryable failures
	RequestTimeout time.Duration // per attempt, body included
	MinBackoff     time.Duration // first retry waits about this long; doubles per attempt, jittered
	MaxBackoff     time.Duration
	// MaxRetryAfter is the longest Retry-After the client sleeps through; a longer one ends the call with the
	// 429 error at once (the whole client still pauses this long) instead of stalling a run for hours.
	MaxRetryAfter time.Duration

	// UnreachableAfter ends a call whose attempts get no answer at all (refused, unreachable, timed
	// out) once the service has answered nothing, to any call, for this long. 0 = 30 s.
	UnreachableAfter time.Duration
	// OnWait, when set, hears of every wait before a retry and every rate-limiter wait of at least
	// WaitNotice, as it starts (a progress display shows them). Called from several goroutines.
	OnWait func(Wait)

	// HTTPClient sends the requests; the client sets its redirect policy on a copy (redirects are
	// followed only for a GET to the configured scheme, host and port).
	HTTPClient *http.Client
	Logger     *slog.Logger // Info line per retry and long wait, Debug line per attempt; nil discards
	UserAgent  string
}

// Wait is a pause the client is about to take.
type Wait struct {
	Delay time.Duration
	Cause string // "429 Retry-After", "retry after HTTP 503", "retry after connection refused", "rate limit 20/min"
	Where string // the call waiting: "GET /hl/v1/invoice page 3"
}

// WaitNotice is the shortest limiter wait reported to OnWait; the pace itself (3 s apart at 20
// requests/minute) is routine. The log has every limiter wait at Debug and their sum at Info, once
// a minute at most.
const WaitNotice = 5 * time.Second

// DefaultUnreachableAfter bounds how long calls keep retrying a service that answers nothing.
const DefaultUnreachableAfter = 30 * time.Second

// dialTimeout bounds one connection attempt, so a host that drops packets costs seconds per
// attempt, not the operating system's minutes.
const dialTimeout = 10 * time.Second

// String keeps the API key out of anything that prints a Config.
func (c Config) String() string {
	base := "(unparseable)"
	if u, err := url.Parse(c.BaseURL); err == nil {
		// a Config may be printed before New has refused credentials or a query in its URL
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		base = u.String()
	}
	if c.APIKey != "" {
		base = strings.ReplaceAll(base, c.APIKey, "[redacted]")
	}
	return fmt.Sprintf("api.Config{BaseURL: %q, APIKey: [redacted]}", base)
}

// GoString keeps the API key out of %#v.
func (c Config) GoString() string { return c.String() }

// LogValue keeps the API key out of slog output.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Client talks to the billing service. It is safe for concurrent use.
type Client struct {
	base        string // BaseURL without a trailing slash
	auth        string // "Bearer <key>"
	key         string
	userAgent   string
	http        *http.Client
	log         *slog.Logger
	screen      *keyScreen // finds the key in records (records.go)
	clk         clock
	lim         *limiter
	maxAttempts int
	timeout     time.Duration
	minBackoff  time.Duration
	maxBackoff  time.Duration
	maxRetryAft time.Duration
	unreachable time.Duration
	onWait      func(Wait)
	ratePerMin  float64
	tally       waitTally // the limiter's waits, summed up in the log once a minute at most

	// lastAnswer is the unix nanoseconds of the latest answer of any kind, or of the client's first
	// attempt before any answer: silence is measured from there, for every call alike, so "no
	// answer for 30s" is the time the service has been silent, not one call's share of it.
	lastAnswer atomic.Int64
	failMu     sync.Mutex
	failing    bool                      // the latest attempt to end got no answer at all
	fell       chan struct{}             // closed when failing turns true
	down       bool                      // a call gave the service up as unreachable, and nothing answered since
	downCh     chan struct{}             // closed when down turns true
	downAt     time.Time                 // when down turned true
	failedAt   time.Time                 // when the latest attempt without an answer ended
	keyRefused atomic.Pointer[AuthError] // the first 401: later calls fail with it, unsent

	requests, retries, throttled, errs atomic.Int64
	serverTime                         atomic.Int64 // unix nanoseconds of the latest Date header; 0 = none
	lastDate                           atomic.Int64 // unix nanoseconds of the Date of the answer that arrived last; 0 = none
	// clockOffset is the latest answer's Date minus this machine's clock when it arrived, in
	// nanoseconds; valid once serverTime is set.
	clockOffset atomic.Int64
	// the range of the offsets the answers' Dates showed since ResetClockRange: a service whose
	// clock is merely wrong shows one offset; one whose Date jumps shows a range.
	rangeMu          sync.Mutex
	rangeLo, rangeHi time.Duration
	rangeN           int64
}

// ClockRange is the range of clock offsets (the service's clock minus this machine's) the
// answers' Date headers showed since ResetClockRange; N counts those answers.
type ClockRange struct {
	Lo, Hi time.Duration
	N      int64
}

// ClockRange is the range of offsets seen since ResetClockRange.
func (c *Client) ClockRange() ClockRange {
	c.rangeMu.Lock()
	defer c.rangeMu.Unlock()
	return ClockRange{Lo: c.rangeLo, Hi: c.rangeHi, N: c.rangeN}
}

// ResetClockRange starts a new range of offsets (a sync run's), and forgets the service's clock
// as the earlier answers showed it: ServerTime and ClockOffset then follow this run's answers
// only. A daemon keeps one Client for every sync, and ServerTime never goes back by itself: after
// the service's clock was set back (an operator correcting it 48 hours), the runs took the
// latest Date of the days before for their time, storing billsync's own times in the future.
func (c *Client) ResetClockRange() {
	c.rangeMu.Lock()
	defer c.rangeMu.Unlock()
	c.rangeLo, c.rangeHi, c.rangeN = 0, 0, 0
	c.serverTime.Store(0)
	c.clockOffset.Store(0)
}

func (c *Client) noteOffset(off time.Duration) {
	c.rangeMu.Lock()
	defer c.rangeMu.Unlock()
	if c.rangeN == 0 || off < c.rangeLo {
		c.rangeLo = off
	}
	if c.rangeN == 0 || off > c.rangeHi {
		c.rangeHi = off
	}
	c.rangeN++
}

// Stats counts what a Client has done since New.
type Stats struct {
	Requests  int64 // HTTP attempts sent
	Retries   int64 // attempts after the first of a call
	Throttled int64 // 429 answers seen
	Errors    int64 // calls that were sent and returned an error
}

// New checks cfg and returns a Client. Errors never contain the API key.
func New(cfg Config) (*Client, error) {
	base, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("api config: BaseURL: %w", err)
	}
	if err := checkKey(cfg.APIKey); err != nil {
		return nil, fmt.Errorf("api config: APIKey: %w", err)
	}
	if cfg.RatePerMin < 0 || cfg.MaxAttempts < 0 || cfg.RequestTimeout < 0 ||
		cfg.MinBackoff < 0 || cfg.MaxBackoff < 0 || cfg.MaxRetryAfter < 0 {
		return nil, errors.New("api config: RatePerMin, MaxAttempts, RequestTimeout, MinBackoff, MaxBackoff and MaxRetryAfter must not be negative")
	}
	c := &Client{
		base:        base,
		auth:        "Bearer " + cfg.APIKey,
		key:         cfg.APIKey,
		screen:      newKeyScreen(cfg.APIKey),
		userAgent:   or(cfg.UserAgent, DefaultUserAgent),
		http:        cfg.HTTPClient,
		log:         cfg.Logger,
		clk:         realClock{},
		maxAttempts: or(cfg.MaxAttempts, DefaultMaxAttempts),
		timeout:     or(cfg.RequestTimeout, DefaultRequestTimeout),
		minBackoff:  or(cfg.MinBackoff, DefaultMinBackoff),
		maxBackoff:  or(cfg.MaxBackoff, DefaultMaxBackoff),
		maxRetryAft: or(cfg.MaxRetryAfter, DefaultMaxRetryAfter),
		unreachable: or(cfg.UnreachableAfter, DefaultUnreachableAfter),
		onWait:      cfg.OnWait,
	}
	if cfg.UnreachableAfter < 0 {
		return nil, errors.New("api config: UnreachableAfter must not be negative")
	}
	if c.minBackoff > c.maxBackoff {
		return nil, fmt.Errorf("api config: MinBackoff %s exceeds MaxBackoff %s", c.minBackoff, c.maxBackoff)
	}
	if c.http == nil {
		c.http = &http.Client{Transport: newTransport()}
	} else {
		hc := *c.http
		c.http = &hc
	}
	c.http.CheckRedirect = c.checkRedirect
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	rate := or(cfg.RatePerMin, DefaultRatePerMin)
	if cfg.Unlimited {
		rate = 0
	}
	c.ratePerMin = rate
	c.lim = newLimiter(c.clk, rate)
	c.fell, c.downCh = make(chan struct{}), make(chan struct{})
	return c, nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func checkBaseURL(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("is empty")
	}
	if !strings.Contains(raw, "://") {
		// "api.example.com" or "api.example.com:8443" parses as a path or a scheme of its own
		return "", fmt.Errorf("no scheme: write it with one, e.g. https://%s", shownHost(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("cannot parse it as a URL: write the scheme and host, e.g. https://api.example.com")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("scheme %q: must be http or https", u.Scheme)
	case u.Host == "":
		return "", errors.New("no host")
	case u.User != nil:
		// credentials in the URL would end up in transport errors: the key belongs in APIKey
		return "", errors.New("must not contain user information")
	case u.RawQuery != "" || u.Fragment != "":
		// the error does not quote the URL: a key put in the query would be printed with it
		return "", errors.New("must not have a query or fragment")
	}
	return strings.TrimRight(raw, "/"), nil
}

// shownHost is the host a base URL without a scheme seems to name, for the example in its error:
// only a plain host[:port] is repeated, never anything that might hold a key.
func shownHost(raw string) string {
	h := strings.TrimLeft(raw, "/")
	if i := strings.IndexAny(h, "/?#"); i >= 0 {
		h = h[:i]
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':') {
			return "api.example.com"
		}
	}
	if h == "" {
		return "api.example.com"
	}
	return h
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("is empty")
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] >= 0x7f {
			return fmt.Errorf("has a space, control or non-ASCII character at byte %d", i)
		}
	}
	return nil
}

// String keeps the API key out of anything that prints a Client.
func (c *Client) String() string { return "api.Client(" + c.base + ")" }

// GoString keeps the API key out of %#v.
func (c *Client) GoString() string { return c.String() }

// LogValue keeps the API key out of slog output.
func (c *Client) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	return Stats{
		Requests:  c.requests.Load(),
		Retries:   c.retries.Load(),
		Throttled: c.throttled.Load(),
		Errors:    c.errs.Load(),
	}
}

// ServerTime is the latest Date header seen in any answer since ResetClockRange (a run's start), or the zero time before one arrives. A sync uses it
// as its observation time, so runs against a simulated clock record simulated time.
func (c *Client) ServerTime() time.Time {
	ns := c.serverTime.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// ClockOffset is how far the service's clock is ahead of this machine's (negative: behind), from
// the latest answer's Date header and the time it arrived; ok is false before any Date arrived.
// Date has whole seconds, so the offset is good to about a second plus the answer's latency.
func (c *Client) ClockOffset() (offset time.Duration, ok bool) {
	if c.serverTime.Load() == 0 {
		return 0, false
	}
	return time.Duration(c.clockOffset.Load()), true
}

// LastDate is the Date header of the answer that arrived last, or the zero time when it had none (or none
// has arrived). Unlike ServerTime it goes back as well as forward: a caller comparing the service's clock
// with its own reads the answer it just got, so one answer with a wild Date misleads that comparison only.
func (c *Client) LastDate() time.Time {
	ns := c.lastDate.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// noteDate keeps the latest Date header, the last answer's and the clock offset it shows;
// answers of concurrent requests may arrive out of order.
func (c *Client) noteDate(h http.Header, arrived time.Time) {
	t, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		c.lastDate.Store(0)
		return
	}
	ns := t.UnixNano()
	c.lastDate.Store(ns)
	c.clockOffset.Store(int64(t.Sub(arrived)))
	c.noteOffset(t.Sub(arrived))
	for {
		old := c.serverTime.Load()
		if ns <= old || c.serverTime.CompareAndSwap(old, ns) {
			return
		}
	}
}

// redact removes the key, and any long fragment of it, from text that came from elsewhere (server
// bodies, transport errors, Locations).
func (c *Client) redact(s string) string { return redactSecret(s, c.key) }

// idleConnsPerHost bounds the connections kept open between requests. net/http keeps 2 by default,
// so a fan-out with more requests in flight closed and reopened connections all the time (about
// 7,000 new connections in a scale-100 sync); billsync talks to one host, and its concurrency is
// well below this.
const idleConnsPerHost = 32

func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = idleConnsPerHost
	t.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	return t
}
