package sandbox

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	Seed        int64
	Scale       float64   // 1 ≈ 10,000 records; 100 ≈ 1,000,000; fractions allowed (0 means 1)
	Now         time.Time // start of the simulated clock; zero = time.Now().UTC() truncated to the second
	Key         string    // read-write key (default DefaultKey)
	ReadOnlyKey string    // read-only key (default DefaultReadOnlyKey)
	MaxPageSize int       // default 100
	ListOrder   ListOrder // order of the paged /hl/v1 lists; "" = $BILLSYNC_TEST_LIST_ORDER, else OrderNewest
	// CreditTimes is how credit-history records write createdAt; "" = ISO 8601 UTC with milliseconds.
	CreditTimes CreditTimeFormat
	// CreditIgnoresSortOrder makes the credit history list oldest first whatever sortOrder asks.
	CreditIgnoresSortOrder bool
	RatePerMin             int  // 0 = unlimited; a token bucket per key, 429 with Retry-After when empty
	Admin                  bool // serve /__sandbox/*
	Faults                 Faults
	Logger                 *slog.Logger
}

// Default keys, printed by cmd/sandbox at start.
const (
	DefaultKey         = "sandbox-rw-key"
	DefaultReadOnlyKey = "sandbox-ro-key"
)

// maxRequestLog bounds the request log; older entries are dropped first.
const maxRequestLog = 200_000

// RequestLog is one request as the server saw it.
type RequestLog struct {
	Time     time.Time `json:"time"` // simulated clock
	Method   string    `json:"method"`
	Path     string    `json:"path"`
	Query    string    `json:"query"`
	Status   int       `json:"status"`
	Fault    FaultKind `json:"fault,omitempty"`
	ReadOnly bool      `json:"readOnly,omitempty"` // made with the read-only key
}

// Server is the simulated service. It is safe for concurrent use.
type Server struct {
	opts Options
	log  *slog.Logger

	mu  sync.RWMutex
	w   *world
	gen uint64 // bumped under mu on every change; invalidates filters

	filters filterCache
	gets    getRoutes // the reads, as collections.go declares them

	faults *faultState
	rate   *rateLimiter

	logMu    sync.Mutex
	requests []RequestLog
}

// New seeds a world deterministically from Seed, Scale and Now.
func New(opts Options) (*Server, error) {
	if opts.Scale == 0 {
		opts.Scale = 1
	}
	if opts.Scale < 0 || math.IsNaN(opts.Scale) || opts.Scale > 1000 {
		return nil, fmt.Errorf("sandbox: scale %v out of range (0, 1000]", opts.Scale)
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now().UTC().Truncate(time.Second)
	}
	if opts.Key == "" {
		opts.Key = DefaultKey
	}
	if opts.ReadOnlyKey == "" {
		opts.ReadOnlyKey = DefaultReadOnlyKey
	}
	if opts.Key == opts.ReadOnlyKey {
		return nil, errors.New("sandbox: read-write and read-only keys must differ")
	}
	if opts.MaxPageSize <= 0 {
		opts.MaxPageSize = 100
	}
	if opts.ListOrder == "" {
		// lets a test suite run whole under each order without touching every test's options
		opts.ListOrder = ListOrder(os.Getenv(ListOrderEnv))
	}
	order, err := ParseListOrder(string(opts.ListOrder))
	if err != nil {
		return nil, err
	}
	opts.ListOrder = order
	if opts.CreditTimes, err = ParseCreditTimeFormat(string(opts.CreditTimes)); err != nil {
		return nil, err
	}
	if opts.RatePerMin < 0 {
		return nil, fmt.Errorf("sandbox: rate %d per minute is negative", opts.RatePerMin)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	fs, err := newFaultState(opts.Faults)
	if err != nil {
		return nil, err
	}
	w := newWorld(opts.Seed, opts.Now.UnixMilli())
	w.seed(opts.Scale)
	w.creditTimes = opts.CreditTimes
	s := &Server{opts: opts, log: opts.Logger, w: w, gets: declaredRoutes(), faults: fs, rate: newRateLimiter(opts.RatePerMin)}
	return s, nil
}

// Now is the simulated clock.
func (s *Server) Now() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return time.UnixMilli(s.w.now).UTC()
}

// Requests returns a copy of the request log (at most the last 200,000).
func (s *Server) Requests() []RequestLog {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return append([]RequestLog(nil), s.requests...)
}

func (s *Server) record(l RequestLog) {
	s.logMu.Lock()
	if len(s.requests) >= maxRequestLog {
		s.requests = append(s.requests[:0], s.requests[len(s.requests)-maxRequestLog/2:]...)
	}
	s.requests = append(s.requests, l)
	s.logMu.Unlock()
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (sw *statusWriter) WriteHeader(code int) {
	if sw.status == 0 {
		sw.status = code
	}
	sw.ResponseWriter.WriteHeader(code)
}

func (sw *statusWriter) Write(b []byte) (int, error) {
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	return sw.ResponseWriter.Write(b)
}

func (sw *statusWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }

// reqCtx carries what a handler needs beyond the request.
type reqCtx struct {
	w         http.ResponseWriter
	r         *http.Request
	fault     *faultPlan
	readWrite bool
}

// ServeHTTP routes one request: admin paths, auth, rate limit, faults, then the endpoint.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: rw}
	rl := RequestLog{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	defer func() {
		rl.Time = s.Now()
		rl.Status = sw.status
		s.record(rl)
		s.log.Debug("sandbox request", "method", rl.Method, "path", rl.Path, "query", rl.Query, "status", rl.Status, "fault", string(rl.Fault))
	}()
	sw.Header().Set("Date", s.dateHeader(nil))

	if rest, ok := strings.CutPrefix(r.URL.Path, "/__sandbox/"); ok {
		if !s.opts.Admin {
			writeError(sw, http.StatusNotFound, "Not Found")
			return
		}
		s.serveAdmin(sw, r, rest)
		return
	}
	readWrite, ok := s.authorize(r)
	if !ok {
		writeError(sw, http.StatusUnauthorized, "Unauthorized")
		return
	}
	rl.ReadOnly = !readWrite
	if wait, ok := s.rate.take(bearer(r), time.Now()); !ok {
		sw.Header().Set("Retry-After", fmt.Sprint(wait))
		writeError(sw, http.StatusTooManyRequests, "Too Many Requests")
		return
	}
	h, ok := s.route(r)
	if !ok {
		writeError(sw, http.StatusNotFound, "Not Found: "+r.URL.Path)
		return
	}
	if h.post != (r.Method == http.MethodPost) || (!h.post && r.Method != http.MethodGet && r.Method != http.MethodHead) {
		sw.Header().Set("Allow", map[bool]string{true: "POST", false: "GET"}[h.post])
		writeError(sw, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if h.post && !readWrite {
		writeError(sw, http.StatusForbidden, "API KEY Scope not allowed to write")
		return
	}
	plan := s.faults.plan(r.URL.Path, h.post)
	rl.Fault = plan.kind
	if plan.kind == FaultWildDate {
		sw.Header().Set("Date", s.dateHeader(plan))
	}
	c := &reqCtx{w: sw, r: r, fault: plan, readWrite: readWrite}
	if plan.before(c) {
		return
	}
	h.fn(c)
}

func bearer(r *http.Request) string {
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

func (s *Server) authorize(r *http.Request) (readWrite, ok bool) {
	k := bearer(r)
	if k == "" {
		return false, false
	}
	if subtle.ConstantTimeCompare([]byte(k), []byte(s.opts.Key)) == 1 {
		return true, true
	}
	if subtle.ConstantTimeCompare([]byte(k), []byte(s.opts.ReadOnlyKey)) == 1 {
		return false, true
	}
	return false, false
}

type handler struct {
	post bool
	fn   func(*reqCtx)
}

// route maps a path to its endpoint: the writes here, the reads as collections.go declares them;
// ids in paths are left to the handler.
func (s *Server) route(r *http.Request) (handler, bool) {
	p := r.URL.Path
	post := func(fn func(*reqCtx)) (handler, bool) { return handler{post: true, fn: fn}, true }
	switch p {
	case "/hl/v1/invoice/create":
		return post(s.createInvoice)
	case "/hl/v1/payment/edit":
		return post(s.editPayment)
	case "/hl/v1/customer/update":
		return post(s.updateCustomer)
	case "/hl/v1/coupon/validate":
		return post(s.validateCoupon)
	case "/credit/v1/credit/generate/immutable/checkout":
		return post(s.immutableCheckout)
	case "/credit/v1/credit/customer/add-credit":
		return post(s.addCredit)
	case "/saas/v1/license/activate":
		return post(func(c *reqCtx) { s.setLicense(c, "ACTIVE") })
	case "/saas/v1/license/deactivate":
		return post(func(c *reqCtx) { s.setLicense(c, "INACTIVE") })
	}
	if fn, ok := s.gets.find(p); ok {
		return handler{fn: func(c *reqCtx) { fn(s, c) }}, true
	}
	return handler{}, false
}

// writeError sends the service's error body; error bodies always say "messages".
func writeError(w http.ResponseWriter, status int, msg string) {
	b := appendQuoted([]byte(fmt.Sprintf(`{"statusCode":%d,"messages":`, status)), msg)
	b = append(b, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// badRequest is a 400 naming the field at fault.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

type notFound struct{ msg string }

func (e notFound) Error() string { return e.msg }

func bad(format string, a ...any) error     { return badRequest{fmt.Sprintf(format, a...)} }
func missing(format string, a ...any) error { return notFound{fmt.Sprintf(format, a...)} }

// fail answers an error from a handler with the matching status.
func (c *reqCtx) fail(err error) {
	var br badRequest
	var nf notFound
	var ce conflictErr
	var de duplicateErr
	switch {
	case errors.As(err, &ce):
		writeError(c.w, http.StatusConflict, ce.msg)
	case errors.As(err, &de):
		writeError(c.w, http.StatusTooManyRequests, de.msg)
	case errors.As(err, &br):
		writeError(c.w, http.StatusBadRequest, br.msg)
	case errors.As(err, &nf):
		writeError(c.w, http.StatusNotFound, nf.msg)
	default:
		writeError(c.w, http.StatusInternalServerError, "Internal Server Error")
	}
}

// send writes a successful body, through the response faults of the plan.
func (c *reqCtx) send(body []byte) {
	c.fault.respond(c, body)
}

// decodeBody reads a POST body into v, naming the field when a type is wrong.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return bad("body: %v", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return bad("body: empty, expected a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return bad("%s: expected %s, got %s", te.Field, te.Type, te.Value)
		}
		return bad("body: malformed JSON: %v", err)
	}
	return nil
}
