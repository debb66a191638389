package sandbox

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FaultKind names one way a response can go wrong.
type FaultKind string

// Fault kinds. The apply_then_* kinds only hit POSTs, after the state change;
// truncation, string numbers and the paging kinds only hit GETs.
const (
	FaultNone              FaultKind = ""
	FaultRateLimit         FaultKind = "rate_limit"          // 429 with Retry-After
	FaultServerError       FaultKind = "server_error"        // 500, 502 or 503
	FaultReset             FaultKind = "reset"               // connection reset mid-response
	FaultSlow              FaultKind = "slow"                // answer after SlowMs
	FaultTruncate          FaultKind = "truncate"            // 200, body cut, Content-Length of the cut body
	FaultTruncateDrop      FaultKind = "truncate_drop"       // 200, full Content-Length, connection dropped mid-body
	FaultStringNumbers     FaultKind = "string_numbers"      // every integer sent as a string
	FaultInsertWhilePaging FaultKind = "insert_while_paging" // page >= 2: a new record first lands at the front
	FaultDuplicatePage     FaultKind = "duplicate_page"      // page >= 2 starts one item early
	FaultApplyThen500      FaultKind = "apply_then_500"      // POST applied, then 500
	FaultApplyThenReset    FaultKind = "apply_then_reset"    // POST applied, then connection reset
	FaultApplyThenHang     FaultKind = "apply_then_hang"     // POST applied, then no answer for HangMs

	// A service that misbehaves (misbehave.go): lists that never end or lie about their size,
	// cursors that loop, implausible times, conflicting duplicates, redirects, key echoes.
	FaultEndlessList          FaultKind = "endless_list"          // lists: hasMore forever, new ids on every page, total unchanged
	FaultSamePageForever      FaultKind = "same_page_forever"     // lists: page 1's records on every page, hasMore forever
	FaultInflatedPageCount    FaultKind = "inflated_page_count"   // lists: pageCount 1000000, pages past the real end empty with hasMore
	FaultConflictingDuplicate FaultKind = "conflicting_duplicate" // lists: page >= 2 repeats page 1's first record with another name and e-mail
	FaultCursorLoop           FaultKind = "cursor_loop"           // webhook history: nextStartingAfter alternates between two values
	FaultEndlessCredit        FaultKind = "endless_credit"        // credit history: totalPages 1e8, new entries on every page
	FaultEpochSeconds         FaultKind = "epoch_seconds"         // createdAt/updatedAt in epoch seconds
	FaultEpochZero            FaultKind = "epoch_zero"            // createdAt/updatedAt 0
	FaultEpochMicros          FaultKind = "epoch_micros"          // createdAt/updatedAt in epoch microseconds
	FaultFutureTime           FaultKind = "future_time"           // the first record's createdAt in 2999
	FaultRedirect             FaultKind = "redirect"              // 302 (307 for a POST) to RedirectTo
	FaultEchoKey500           FaultKind = "echo_key_500"          // 500 with an HTML body echoing the Authorization header across a 120-character cut
	FaultHasMoreString        FaultKind = "has_more_string"       // lists: hasMore the string "false" on every page, counts true
	FaultNullData             FaultKind = "null_data"             // lists: data null, total 0, pageCount 0, hasMore false
	FaultUnannouncedEndless   FaultKind = "unannounced_endless"   // lists: neither pageCount nor total, hasMore forever, new ids on every page
	FaultDotIDs               FaultKind = "dot_ids"               // lists: page 1's first two records have the ids "." and ".."
	FaultDateAhead            FaultKind = "date_ahead"            // the Date header 5 years ahead of the simulated clock; records as they are
	FaultRepeatedKey          FaultKind = "repeated_key"          // lists: the page's first record gives "id" twice, with two values
	FaultEchoKeyRecord        FaultKind = "echo_key_record"       // lists: page 1's first record's name carries the request's API key
	FaultInvalidUTF8          FaultKind = "invalid_utf8"          // lists: page 1's first record's name holds bytes that are not UTF-8

	// A service whose clock or identity is off (clockfaults.go), against which a write's lost answer is
	// reconciled. The Date offsets and the add-credit entry's faults are Faults fields, set for every answer.
	FaultWildDate            FaultKind = "wild_date"             // this answer's Date header is off by WildDateSeconds
	FaultForeignCredit       FaultKind = "foreign_credit"        // credit history: the customer's entries and another customer's
	FaultOtherCustomerCredit FaultKind = "other_customer_credit" // credit history: another customer's entries instead of the customer's
)

// Faults are the fractions of requests (0..1, summing to at most 1) that fail
// in each way, decided deterministically from Seed and the request's sequence
// number among the requests the faults apply to.
type Faults struct {
	Seed       int64  `json:"seed"`
	PathPrefix string `json:"pathPrefix"` // only requests under this path; "" = all

	RateLimit         float64 `json:"rateLimit"`
	ServerError       float64 `json:"serverError"`
	Reset             float64 `json:"reset"`
	Slow              float64 `json:"slow"`
	Truncate          float64 `json:"truncate"`
	TruncateDrop      float64 `json:"truncateDrop"`
	StringNumbers     float64 `json:"stringNumbers"`
	InsertWhilePaging float64 `json:"insertWhilePaging"`
	DuplicatePage     float64 `json:"duplicatePage"`
	ApplyThen500      float64 `json:"applyThen500"`
	ApplyThenReset    float64 `json:"applyThenReset"`
	ApplyThenHang     float64 `json:"applyThenHang"`

	EndlessList          float64 `json:"endlessList"`
	SamePageForever      float64 `json:"samePageForever"`
	InflatedPageCount    float64 `json:"inflatedPageCount"`
	ConflictingDuplicate float64 `json:"conflictingDuplicate"`
	CursorLoop           float64 `json:"cursorLoop"`
	EndlessCredit        float64 `json:"endlessCredit"`
	EpochSeconds         float64 `json:"epochSeconds"`
	EpochZero            float64 `json:"epochZero"`
	EpochMicros          float64 `json:"epochMicros"`
	FutureTime           float64 `json:"futureTime"`
	Redirect             float64 `json:"redirect"`
	EchoKey500           float64 `json:"echoKey500"`
	HasMoreString        float64 `json:"hasMoreString"`
	NullData             float64 `json:"nullData"`
	UnannouncedEndless   float64 `json:"unannouncedEndless"`
	DotIDs               float64 `json:"dotIds"`
	DateAhead            float64 `json:"dateAhead"`

	RepeatedKey         float64 `json:"repeatedKey"`
	EchoKeyRecord       float64 `json:"echoKeyRecord"`
	InvalidUTF8         float64 `json:"invalidUtf8"`
	WildDate            float64 `json:"wildDate"`
	ForeignCredit       float64 `json:"foreignCredit"`
	OtherCustomerCredit float64 `json:"otherCustomerCredit"`

	// DateOffsetSeconds moves every answer's Date header off the simulated clock (negative: behind); the
	// records keep the simulated clock's times.
	DateOffsetSeconds int64 `json:"dateOffsetSeconds"`
	// WildDateSeconds is how far the wild_date fault moves one answer's Date; 0 = three years ahead.
	WildDateSeconds int64 `json:"wildDateSeconds"`
	// TopupEpochSeconds: a ledger entry add-credit writes from now on shows its createdAt as a number of epoch
	// seconds (the other entries keep the configured format).
	TopupEpochSeconds bool `json:"topupEpochSeconds"`
	// TopupVisibleAfterMs: a ledger entry add-credit writes from now on shows in the credit history only this
	// long after the write, by the simulated clock (Advance); the balance has it at once.
	TopupVisibleAfterMs int64 `json:"topupVisibleAfterMs"`

	// RedirectTo is the scheme and host the redirect fault sends clients to, the request's path and
	// query appended; "" = the same host on the next port.
	RedirectTo string `json:"redirectTo"`

	RetryAfter int `json:"retryAfterSeconds"` // Retry-After of rate_limit faults; default 1
	SlowMs     int `json:"slowMs"`            // default 2000
	HangMs     int `json:"hangMs"`            // default 60000, or until the client goes away
}

func (f *Faults) fractions() []struct {
	kind FaultKind
	p    float64
} {
	return []struct {
		kind FaultKind
		p    float64
	}{
		{FaultRateLimit, f.RateLimit}, {FaultServerError, f.ServerError}, {FaultReset, f.Reset},
		{FaultSlow, f.Slow}, {FaultTruncate, f.Truncate}, {FaultTruncateDrop, f.TruncateDrop},
		{FaultStringNumbers, f.StringNumbers}, {FaultInsertWhilePaging, f.InsertWhilePaging},
		{FaultDuplicatePage, f.DuplicatePage}, {FaultApplyThen500, f.ApplyThen500},
		{FaultApplyThenReset, f.ApplyThenReset}, {FaultApplyThenHang, f.ApplyThenHang},
		{FaultEndlessList, f.EndlessList}, {FaultSamePageForever, f.SamePageForever},
		{FaultInflatedPageCount, f.InflatedPageCount}, {FaultConflictingDuplicate, f.ConflictingDuplicate},
		{FaultCursorLoop, f.CursorLoop}, {FaultEndlessCredit, f.EndlessCredit},
		{FaultEpochSeconds, f.EpochSeconds}, {FaultEpochZero, f.EpochZero}, {FaultEpochMicros, f.EpochMicros},
		{FaultFutureTime, f.FutureTime}, {FaultRedirect, f.Redirect}, {FaultEchoKey500, f.EchoKey500},
		{FaultHasMoreString, f.HasMoreString}, {FaultNullData, f.NullData}, {FaultUnannouncedEndless, f.UnannouncedEndless},
		{FaultDotIDs, f.DotIDs}, {FaultDateAhead, f.DateAhead},
		{FaultRepeatedKey, f.RepeatedKey}, {FaultEchoKeyRecord, f.EchoKeyRecord}, {FaultInvalidUTF8, f.InvalidUTF8},
		{FaultWildDate, f.WildDate}, {FaultForeignCredit, f.ForeignCredit}, {FaultOtherCustomerCredit, f.OtherCustomerCredit},
	}
}

func (f *Faults) validate() error {
	sum := 0.0
	for _, fr := range f.fractions() {
		if fr.p < 0 || fr.p > 1 {
			return fmt.Errorf("sandbox faults: %s fraction %v outside [0, 1]", fr.kind, fr.p)
		}
		sum += fr.p
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("sandbox faults: fractions sum to %v, more than 1", sum)
	}
	if f.RetryAfter < 0 || f.SlowMs < 0 || f.HangMs < 0 || f.TopupVisibleAfterMs < 0 {
		return errors.New("sandbox faults: negative retryAfterSeconds, slowMs, hangMs or topupVisibleAfterMs")
	}
	return nil
}

// appliesTo says whether kind can hit a request of this method.
func (k FaultKind) appliesTo(post bool) bool {
	switch k {
	case FaultApplyThen500, FaultApplyThenReset, FaultApplyThenHang:
		return post
	case FaultTruncate, FaultTruncateDrop, FaultStringNumbers, FaultInsertWhilePaging, FaultDuplicatePage,
		FaultEndlessList, FaultSamePageForever, FaultInflatedPageCount, FaultConflictingDuplicate, FaultCursorLoop,
		FaultEndlessCredit, FaultEpochSeconds, FaultEpochZero, FaultEpochMicros, FaultFutureTime,
		FaultHasMoreString, FaultNullData, FaultUnannouncedEndless, FaultDotIDs,
		FaultForeignCredit, FaultOtherCustomerCredit, FaultRepeatedKey, FaultEchoKeyRecord, FaultInvalidUTF8:
		return !post
	}
	return true
}

func validKind(k FaultKind) bool {
	var f Faults
	for _, fr := range f.fractions() {
		if fr.kind == k {
			return true
		}
	}
	return false
}

type forced struct {
	kind   FaultKind
	left   int
	prefix string
}

type faultState struct {
	mu     sync.Mutex
	f      Faults
	seq    uint64
	forced []forced

	loopMu     sync.Mutex
	loopCursor string // cursor_loop: the first cursor handed out, which the loop returns to
}

func newFaultState(f Faults) (*faultState, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	return &faultState{f: f}, nil
}

// SetFaults replaces the whole fault configuration, pending FailNext faults included; the
// sequence restarts so a given Faults value always produces the same faults.
func (s *Server) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	s.faults.mu.Lock()
	s.faults.f, s.faults.seq, s.faults.forced = f, 0, nil
	s.faults.loopMu.Lock()
	s.faults.loopCursor = ""
	s.faults.loopMu.Unlock()
	s.faults.mu.Unlock()
	return nil
}

// FailNext makes the next n requests under pathPrefix ("" = any) that kind can
// hit fail with kind, ahead of any fractions.
func (s *Server) FailNext(kind FaultKind, n int, pathPrefix string) error {
	if !validKind(kind) {
		return fmt.Errorf("sandbox: unknown fault kind %q", kind)
	}
	s.faults.mu.Lock()
	s.faults.forced = append(s.faults.forced, forced{kind, n, pathPrefix})
	s.faults.mu.Unlock()
	return nil
}

// faultPlan is what will go wrong with one request.
type faultPlan struct {
	kind       FaultKind
	status     int // server_error's status
	retryAfter int
	delay      time.Duration
	redirectTo string
	state      *faultState
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func (fs *faultState) plan(path string, post bool) *faultPlan {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.f
	p := &faultPlan{retryAfter: max(f.RetryAfter, 1), status: http.StatusInternalServerError, redirectTo: f.RedirectTo, state: fs}
	p.delay = time.Duration(f.SlowMs) * time.Millisecond
	if f.SlowMs == 0 {
		p.delay = 2 * time.Second
	}
	for i := range fs.forced {
		fo := &fs.forced[i]
		if fo.left > 0 && strings.HasPrefix(path, fo.prefix) && fo.kind.appliesTo(post) {
			fo.left--
			p.kind = fo.kind
			if fo.left == 0 {
				fs.forced = append(fs.forced[:i], fs.forced[i+1:]...)
			}
			p.hang(f)
			return p
		}
	}
	if !strings.HasPrefix(path, f.PathPrefix) {
		return p
	}
	fs.seq++
	r := splitmix(uint64(f.Seed)*0x2545f4914f6cdd1d + fs.seq)
	u := float64(r>>11) / (1 << 53)
	p.status = []int{500, 502, 503}[r%3]
	acc := 0.0
	for _, fr := range f.fractions() {
		acc += fr.p
		if u < acc {
			if fr.kind.appliesTo(post) {
				p.kind = fr.kind
			}
			break
		}
	}
	p.hang(f)
	return p
}

func (p *faultPlan) hang(f Faults) {
	if p.kind == FaultApplyThenHang {
		p.delay = time.Duration(f.HangMs) * time.Millisecond
		if f.HangMs == 0 {
			p.delay = time.Minute
		}
	}
}

// before applies the faults that strike before the endpoint runs; true means
// the request has been answered (or abandoned).
func (p *faultPlan) before(c *reqCtx) bool {
	switch p.kind {
	case FaultRateLimit:
		c.w.Header().Set("Retry-After", strconv.Itoa(p.retryAfter))
		writeError(c.w, http.StatusTooManyRequests, "Too Many Requests")
		return true
	case FaultServerError:
		writeError(c.w, p.status, http.StatusText(p.status))
		return true
	case FaultReset:
		reset(c, []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"))
		return true
	case FaultRedirect:
		redirect(c, p.redirectTo)
		return true
	case FaultEchoKey500:
		echoKey(c)
		return true
	case FaultDateAhead:
		if d, err := http.ParseTime(c.w.Header().Get("Date")); err == nil {
			c.w.Header().Set("Date", d.AddDate(dateAheadYears, 0, 0).Format(http.TimeFormat))
		}
	case FaultSlow:
		select {
		case <-time.After(p.delay):
		case <-c.r.Context().Done():
			return true
		}
	}
	return false
}

// respond writes a successful body through the faults that strike after the endpoint ran.
func (p *faultPlan) respond(c *reqCtx, body []byte) {
	h := c.w.Header()
	h.Set("Content-Type", "application/json")
	switch p.kind {
	case FaultTruncate:
		cut := body[:len(body)/2]
		h.Set("Content-Length", strconv.Itoa(len(cut)))
		c.w.WriteHeader(http.StatusOK)
		c.w.Write(cut)
		return
	case FaultTruncateDrop:
		h.Set("Content-Length", strconv.Itoa(len(body)))
		c.w.WriteHeader(http.StatusOK)
		c.w.Write(body[:len(body)/2])
		reset(c, nil)
		return
	case FaultApplyThen500:
		writeError(c.w, http.StatusInternalServerError, "Internal Server Error")
		return
	case FaultApplyThenReset:
		reset(c, nil)
		return
	case FaultApplyThenHang:
		select {
		case <-time.After(p.delay):
		case <-c.r.Context().Done():
		}
		reset(c, nil)
		return
	}
	body = misbehaveBody(p.kind, body)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.w.WriteHeader(http.StatusOK)
	c.w.Write(body)
}

// reset takes the connection over, writes partial bytes and closes it with a
// TCP reset; without a hijackable connection it aborts the handler instead.
func reset(c *reqCtx, partial []byte) {
	conn, buf, err := http.NewResponseController(c.w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if len(partial) > 0 {
		buf.Write(partial)
		buf.Flush()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// rateLimiter is a token bucket per key, refilled continuously.
type rateLimiter struct {
	perMin  int
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimiter(perMin int) *rateLimiter {
	return &rateLimiter{perMin: perMin, buckets: map[string]*bucket{}}
}

// take spends one token for key; when none is left it says how many seconds to wait.
func (rl *rateLimiter) take(key string, now time.Time) (wait int, ok bool) {
	if rl.perMin <= 0 {
		return 0, true
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	b := rl.buckets[key]
	capacity := float64(rl.perMin)
	if b == nil {
		b = &bucket{tokens: capacity, at: now}
		rl.buckets[key] = b
	}
	perSec := capacity / 60
	b.tokens = min(capacity, b.tokens+now.Sub(b.at).Seconds()*perSec)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return max(int(math.Ceil((1-b.tokens)/perSec)), 1), false
}
