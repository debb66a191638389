package sandbox

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The faults of a service that misbehaves rather than fails: each is one class of answer a careful
// client must survive with bounded time and memory, a located error and its key kept to itself.

// inflatedPageCount is the page count the inflated_page_count fault announces.
const inflatedPageCount = 1_000_000

// endlessCreditPages is the totalPages the endless_credit fault announces.
const endlessCreditPages = 100_000_000

// listShape adjusts a list page for the list faults: which records it shows, what it announces.
type listShape struct {
	hasMore   bool
	pageCount int
	// synthetic gives every record a new id derived from the page, so each page brings new records.
	synthetic bool
	// conflict is a record of page 1 shown again first on this page, with another name and e-mail.
	conflict bool
	// hasMoreString sends hasMore as the string "false"; nullData sends data null with a total and
	// a page count of 0; unannounced sends neither pageCount nor a total; dotIDs gives page 1's
	// first two records the ids "." and "..".
	hasMoreString, nullData, unannounced, dotIDs bool
	// echoKey puts the request's API key into page 1's first name; badUTF8 puts bytes that are not
	// UTF-8 there.
	echoKey, badUTF8 bool
}

// dateAheadYears is how far ahead of the simulated clock the date_ahead fault dates its answers.
const dateAheadYears = 5

// shapeList applies the list faults to page pg of a list whose real page count is pageCount; off
// is the offset of the records the page shows (possibly changed).
func (c *reqCtx) shapeList(pg pageReq, pageCount, total int, off *int) listShape {
	sh := listShape{hasMore: pg.page < pageCount, pageCount: pageCount}
	switch c.fault.kind {
	case FaultEndlessList:
		// the real records, cycled, each time under new ids; the total stays what it was
		if total > 0 {
			*off = (pg.page - 1) * pg.size % total
		}
		sh.hasMore, sh.pageCount, sh.synthetic = true, pg.page+1, true
	case FaultSamePageForever:
		*off = 0
		sh.hasMore, sh.pageCount = true, pg.page+1
	case FaultInflatedPageCount:
		sh.pageCount = inflatedPageCount
		sh.hasMore = pg.page < inflatedPageCount
	case FaultConflictingDuplicate:
		sh.conflict = pg.page > 1
	case FaultHasMoreString:
		sh.hasMoreString = true
	case FaultNullData:
		sh.nullData, sh.hasMore, sh.pageCount = true, false, 0
	case FaultUnannouncedEndless:
		if total > 0 {
			*off = (pg.page - 1) * pg.size % total
		}
		sh.hasMore, sh.unannounced, sh.synthetic = true, true, true
	case FaultDotIDs:
		sh.dotIDs = pg.page == 1
	case FaultEchoKeyRecord:
		sh.echoKey = pg.page == 1
	case FaultInvalidUTF8:
		sh.badUTF8 = pg.page == 1
	}
	return sh
}

// dotIDs gives the first two records of a page body the ids "." and "..": every record the
// simulator encodes begins {"id":"<id>".
func dotIDs(b []byte, at int) []byte {
	for _, id := range []string{".", ".."} {
		i := bytes.Index(b[at:], []byte(`{"id":"`))
		if i < 0 {
			return b
		}
		start := at + i + idOffset
		end := bytes.IndexByte(b[start:], '"')
		if end < 0 {
			return b
		}
		b = append(b[:start], append([]byte(id), b[start+end:]...)...)
		at = start + len(id)
	}
	return b
}

// intoFirstName appends add to the first "name" value of a page body from at on (customers, products,
// invoices and the other lists with a name: a service that echoes what it was sent, or stores bytes it
// never checked).
func intoFirstName(b []byte, at int, add []byte) []byte {
	i := bytes.Index(b[at:], []byte(`"name":"`))
	if i < 0 {
		return b
	}
	start := at + i + len(`"name":"`)
	end := bytes.IndexByte(b[start:], '"')
	if end < 0 {
		return b
	}
	cut := start + end
	return append(b[:cut:cut], append(append([]byte(nil), add...), b[cut:]...)...)
}

// echoedKey is what the echo_key_record fault adds to a name: the key the request carried, as a
// service that stored it in a free-text field would show it.
func echoedKey(r *http.Request) []byte {
	return []byte(" " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
}

// notUTF8 is what the invalid_utf8 fault adds to a name: "é" in Latin-1, a lone continuation byte.
var notUTF8 = []byte(" Jos\xe9 \x80")

// idOffset is where a record's id value starts: every record the simulator encodes begins {"id":"
const idOffset = len(`{"id":"`)

// reid overwrites the first 8 hex digits of the id of the record starting at b[start:] with n, so
// the record is new to the client.
func reid(b []byte, start int, n uint64) {
	if start+idOffset+8 > len(b) {
		return
	}
	var h [8]byte
	hex.Encode(h[:], []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	copy(b[start+idOffset:], h[:])
}

// conflicted rewrites the record at b[start:] to a second version: another name and e-mail.
func conflicted(rec []byte) []byte {
	rec = bytes.Replace(rec, []byte(`"name":"`), []byte(`"name":"Versi Lain `), 1)
	return bytes.Replace(rec, []byte(`"email":"`), []byte(`"email":"versi.lain.`), 1)
}

var (
	msTime  = regexp.MustCompile(`"(createdAt|updatedAt)":("?)(\d{12,14})("?)`)
	isoTime = regexp.MustCompile(`"(createdAt|updatedAt)":"(\d{4}-\d\d-\d\dT[0-9:.]+Z)"`)
	anyTime = regexp.MustCompile(`"createdAt":("?)[^",}]+("?)`)
)

// misbehaveBody rewrites the times of a successful GET body for the time faults.
func misbehaveBody(kind FaultKind, body []byte) []byte {
	var conv func(ms int64) int64
	switch kind {
	case FaultEpochSeconds:
		conv = func(ms int64) int64 { return ms / 1000 }
	case FaultEpochZero:
		conv = func(int64) int64 { return 0 }
	case FaultEpochMicros:
		conv = func(ms int64) int64 { return ms * 1000 }
	case FaultRepeatedKey:
		// the first record says "id" a second time, with another value: Go's decoders keep the last,
		// DuckDB's JSON functions the first
		at := bytes.Index(body, []byte(`{"id":"`))
		if at < 0 {
			return body
		}
		end := bytes.IndexByte(body[at+idOffset:], '"')
		if end < 0 {
			return body
		}
		cut := at + idOffset + end + 1
		return append(append(append([]byte(nil), body[:cut]...), `,"id":"00000000-0000-0000-0000-00000000abcd"`...), body[cut:]...)
	case FaultFutureTime:
		done := false
		return anyTime.ReplaceAllFunc(body, func(m []byte) []byte {
			if done {
				return m
			}
			done = true
			if bytes.HasPrefix(m, []byte(`"createdAt":"`)) {
				return []byte(`"createdAt":"2999-01-01T00:00:00.000Z"`)
			}
			return []byte(`"createdAt":32503680000000`)
		})
	default:
		return body
	}
	body = msTime.ReplaceAllFunc(body, func(m []byte) []byte {
		sm := msTime.FindSubmatch(m)
		ms, _ := strconv.ParseInt(string(sm[3]), 10, 64)
		return fmt.Appendf(nil, `"%s":%s%d%s`, sm[1], sm[2], conv(ms), sm[4])
	})
	return isoTime.ReplaceAllFunc(body, func(m []byte) []byte {
		sm := isoTime.FindSubmatch(m)
		t, err := time.Parse(time.RFC3339Nano, string(sm[2]))
		if err != nil {
			return m
		}
		return fmt.Appendf(nil, `"%s":%d`, sm[1], conv(t.UnixMilli()))
	})
}

// redirect answers 302 (307 for a POST, which asks the client to send the body again) to the same
// path under to, or under the same host's next port.
func redirect(c *reqCtx, to string) {
	if to == "" {
		host, port, err := net.SplitHostPort(c.r.Host)
		if err != nil {
			host, port = c.r.Host, "80"
		}
		n, _ := strconv.Atoi(port)
		to = "http://" + net.JoinHostPort(host, strconv.Itoa(n+1))
	}
	status := http.StatusFound
	if c.r.Method == http.MethodPost {
		status = http.StatusTemporaryRedirect
	}
	c.w.Header().Set("Location", strings.TrimRight(to, "/")+c.r.URL.RequestURI())
	c.w.WriteHeader(status)
}

// echoKey answers 500 with an HTML page that echoes the Authorization header so that the key
// straddles the 120th character, where clients commonly cut a body for a message.
func echoKey(c *reqCtx) {
	auth := c.r.Header.Get("Authorization")
	head := "<html><body><h1>500 Internal Server Error</h1><pre>"
	pad := 120 - len(head) - len("Authorization: ") - len(auth)/2
	body := head + strings.Repeat(".", max(pad, 0)) + "Authorization: " + auth + "\n" + c.r.Method + " " + c.r.URL.Path + "</pre></body></html>"
	c.w.Header().Set("Content-Type", "text/html")
	c.w.WriteHeader(http.StatusInternalServerError)
	c.w.Write([]byte(body))
}

// loopNext makes webhook cursors alternate between two values and never end: the first cursor
// handed out (A) leads to a second (B: the real next one, or A plus a millisecond), and B, like any
// other, leads back to A.
func (fs *faultState) loopNext(after, next string) string {
	fs.loopMu.Lock()
	defer fs.loopMu.Unlock()
	plus1 := func(v string) string {
		n, _ := strconv.ParseInt(v, 10, 64)
		return strconv.FormatInt(n+1, 10)
	}
	switch {
	case fs.loopCursor == "":
		if next == "" || next == after {
			next = plus1(after)
		}
		fs.loopCursor = next
		return next
	case after == fs.loopCursor:
		if next == "" || next == after {
			next = plus1(after)
		}
		return next
	}
	return fs.loopCursor
}
