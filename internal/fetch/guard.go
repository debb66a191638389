package fetch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/syncdata"
	gojson "github.com/goccy/go-json"
)

// A paged read cannot run away: every page of a list (and of one customer's credit history) passes
// a guard that stops the read with a located error when what the server sends contradicts what it
// announced, or repeats itself. Memory per guard is one 16-byte map slot per distinct record
// (about 38 bytes with the map's free slots) and 8 bytes per page.

// DefaultMaxPages is the ceiling of pages of one list per run when the server announces nothing
// usable; DefaultMaxCreditPages the same for one customer's credit history. At the service's 20
// requests a minute they are days and about an hour of paging.
const (
	DefaultMaxPages       = 100_000
	DefaultMaxCreditPages = 1_000
)

// FirstReadPages is the ceiling of pages of a list that announces neither a page count nor a
// total, on the account's first complete read of it; later reads take theirs from the last
// complete read's count (unannouncedCeiling). The service announces both on every list, so only
// a misbehaving one meets it: 500,000 records at the default page size, about four hours at
// 20 requests a minute.
const FirstReadPages = 5_000

// unannouncedCeiling is the ceiling of pages of a list that announces nothing, from the records
// the last complete read of it returned (known; <0: none yet): twice as many, and ten pages more.
func unannouncedCeiling(known int64, size int) int {
	if known < 0 {
		return FirstReadPages
	}
	size = max(size, 1)
	return int(min(int64(FirstReadPages), 2*((known+int64(size)-1)/int64(size))+10))
}

// maxDoubts bounds the doubts a guard keeps: each names a page, and the first few say enough.
const maxDoubts = 3

// slackPages is how many pages past what the server announced a read may go: a list can grow
// while it is paged (a new record pushes one onto the next page).
func slackPages(announced int) int { return 2 + announced/10 }

// slackRecords is how many distinct records beyond the announced total a read accepts, for the
// same reason.
func slackRecords(total int64, size int) int64 { return int64(2*size) + total/10 }

var idSeed = maphash.MakeSeed()

// A guard keeps, per distinct id (by a 64-bit hash of it), one uint64: a 32-bit hash of the
// record's bytes and the 32-bit ordinal of the record within the read, from which the pages' starts
// give back page and item. With the hashes and page and item each in their own word, the guards were
// most of the sync's Go heap at its peak: 63 MB of 65 at scale 200, 40-56 bytes a record in Go's
// map (docs/performance.md). Half the content hash's bits cost nothing real: two versions of one id
// taken for the same content one time in 2^32 leave the last version read, as a detected
// conflict does, without its record in data_quality_conflicts; two distinct ids colliding in the
// 64-bit id hash, a risk already taken, is several hundred times likelier over 2M records.
func seenValue(content uint64, ordinal uint32) uint64 { return content&^0xffffffff | uint64(ordinal) }

func seenContent(v uint64) uint64 { return v &^ 0xffffffff }
func seenOrdinal(v uint64) uint32 { return uint32(v) }

// pageStart is the ordinal of the first item of a page, in the order pages were checked.
type pageStart struct {
	ordinal uint32
	page    int32
}

type guard struct {
	what     string // "GET /hl/v1/customer", for messages
	maxPages int

	mu        sync.Mutex
	started   bool
	ceiling   int
	announced string // what page 1 announced, for messages
	total     int64  // announced total (or page count × size); -1 unknown
	size      int
	pages     map[uint64]int    // page fingerprint -> page number
	ids       map[uint64]uint64 // id hash -> seenValue of where it was last read and what it said
	starts    []pageStart       // ascending ordinals
	next      uint64            // the ordinal of the next page's first item
	distinct  int64
	cursors   map[string]int           // cursor -> page that handed it out
	list      bool                     // a list's read: a ceiling from known when nothing is announced
	known     int64                    // records of the last complete read of the list; <0: none yet
	doubts    []string                 // pages' envelopes that cannot prove the read complete, located
	doubted   int                      // pages with doubts, kept or not
	watch     map[string]bool          // ids in conflict in an earlier pass: keep their raws
	kept      map[string][]keptVersion // raws of watched ids, by id
	conflicts []syncdata.Conflict
}

type keptVersion struct {
	content   uint64
	page, idx int
	raw       json.RawMessage
}

func newGuard(what string, maxPages int, watch map[string]bool) *guard {
	return &guard{what: what, maxPages: maxPages, total: -1, pages: map[uint64]int{}, ids: map[uint64]uint64{},
		watch: watch, kept: map[string][]keptVersion{}}
}

// start takes the first page's announcements and derives the ceiling of pages for the read.
func (g *guard) start(p *api.ListPage) {
	if g.started {
		return
	}
	g.started = true
	g.size = p.PageSize
	if g.size <= 0 {
		g.size = len(p.Items)
	}
	g.ceiling = g.maxPages
	if p.PageCount > 0 {
		g.ceiling = min(g.ceiling, p.PageCount+slackPages(p.PageCount))
	}
	g.total = p.Total
	if p.PageCount <= 0 && p.Total < 0 && g.list {
		// Nothing announced: the ceiling comes from what billsync knows of the list.
		g.ceiling = min(g.ceiling, unannouncedCeiling(g.known, g.size))
		if g.known < 0 {
			g.announced = fmt.Sprintf("neither pageCount nor a total announced; %d pages is the first read's ceiling", g.ceiling)
		} else {
			g.announced = fmt.Sprintf("neither pageCount nor a total announced; the last complete read had %d records", g.known)
		}
		return
	}
	if p.Total >= 0 && g.size > 0 {
		byTotal := int(min(int64(g.maxPages), 2*((p.Total+int64(g.size)-1)/int64(g.size))))
		g.ceiling = min(g.ceiling, byTotal+slackPages(byTotal))
	} else if p.PageCount > 0 && g.size > 0 {
		g.total = int64(p.PageCount) * int64(g.size)
	}
	g.announced = fmt.Sprintf("pageCount %d, total %d, page size %d", p.PageCount, p.Total, p.PageSize)
}

// check looks at page n before its records are staged; an error stops the read.
func (g *guard) check(n int, p *api.ListPage) ([]syncdata.Conflict, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.start(p)
	if n > g.ceiling {
		return nil, fmt.Errorf("%s page %d: past the ceiling of %d pages derived from what the server announced (%s); stopped",
			g.what, n, g.ceiling, g.announced)
	}
	if len(p.Doubts) > 0 {
		g.doubt(fmt.Sprintf("page %d: %s", n, strings.Join(p.Doubts, "; ")))
	}
	if len(p.Items) == 0 {
		if p.HasMore {
			return nil, fmt.Errorf("%s page %d: empty, yet hasMore is true; stopped", g.what, n)
		}
		return nil, nil
	}
	if g.next+uint64(len(p.Items)) > math.MaxUint32 {
		return nil, fmt.Errorf("%s page %d: more than %d records in one read; stopped", g.what, n, uint64(math.MaxUint32))
	}
	first := uint32(g.next)
	g.next += uint64(len(p.Items))
	g.starts = append(g.starts, pageStart{ordinal: first, page: int32(n)})
	var sig maphash.Hash
	sig.SetSeed(idSeed)
	var found []syncdata.Conflict
	for i, raw := range p.Items {
		// A record giving a key twice has no single reading (Go keeps the last value, DuckDB the first,
		// and the id is read by both): it is refused here, as the write jobs' reconciliation refuses it.
		if key, dup := api.RepeatedKey(raw); dup {
			where := fmt.Sprintf("%s page %d item %d", g.what, n, i)
			if id := recordID(raw); id != "" {
				where += " (id " + id + ")"
			}
			return nil, fmt.Errorf("%s: gives %q twice, so it has no single reading; stopped", where, key)
		}
		id := recordID(raw)
		if id == "" {
			continue // the merge's validation names records without an id
		}
		sig.WriteString(id)
		sig.WriteByte(0)
		h := maphash.String(idSeed, id)
		content := seenContent(maphash.Bytes(idSeed, raw))
		if g.watch[id] {
			g.keep(id, content, n, i, raw)
		}
		seen := seenValue(content, first+uint32(i))
		prev, ok := g.ids[h]
		if !ok {
			g.ids[h] = seen
			g.distinct++
			continue
		}
		if seenContent(prev) != content {
			firstPage, firstIdx := g.position(seenOrdinal(prev))
			c := syncdata.Conflict{ID: id, FirstPage: firstPage, FirstIdx: firstIdx, SecondPage: n, SecondIdx: i,
				SecondRaw: append(json.RawMessage(nil), raw...)}
			for _, k := range g.kept[id] {
				if k.content == seenContent(prev) {
					c.FirstRaw = k.raw
				}
			}
			found = append(found, c)
			g.ids[h] = seen
		}
	}
	fp := sig.Sum64()
	if at, ok := g.pages[fp]; ok {
		return nil, fmt.Errorf("%s page %d: the same %d ids as page %d; stopped", g.what, n, len(p.Items), at)
	}
	g.pages[fp] = n
	if g.total >= 0 && g.distinct > g.total+slackRecords(g.total, g.size) {
		return nil, fmt.Errorf("%s page %d: %d distinct records, more than the %d the server announced (%s) allow; stopped",
			g.what, n, g.distinct, g.total, g.announced)
	}
	g.conflicts = append(g.conflicts, found...)
	return found, nil
}

// doubt notes why the read cannot be proven complete; the guard's mutex is held.
func (g *guard) doubt(why string) {
	g.doubted++
	if len(g.doubts) < maxDoubts {
		g.doubts = append(g.doubts, g.what+" "+why)
	}
}

// addDoubt is doubt for the pager, outside check.
func (g *guard) addDoubt(why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.doubt(why)
}

// doubtText says why the read cannot be proven complete, "" when nothing does.
func (g *guard) doubtText() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.doubted == 0 {
		return ""
	}
	s := strings.Join(g.doubts, "; ")
	if more := g.doubted - len(g.doubts); more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}

// position is the page and item of the record read at ordinal.
func (g *guard) position(ordinal uint32) (page, idx int) {
	i := sort.Search(len(g.starts), func(i int) bool { return g.starts[i].ordinal > ordinal }) - 1
	return int(g.starts[i].page), int(ordinal - g.starts[i].ordinal)
}

func (g *guard) keep(id string, content uint64, page, idx int, raw json.RawMessage) {
	for _, k := range g.kept[id] {
		if k.content == content {
			return
		}
	}
	g.kept[id] = append(g.kept[id], keptVersion{content, page, idx, append(json.RawMessage(nil), raw...)})
}

// cursor records the cursor page n hands out; a cursor seen before in this read is a loop.
func (g *guard) cursor(n int, next string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cursors == nil {
		g.cursors = map[string]int{}
	}
	if at, ok := g.cursors[next]; ok {
		return fmt.Errorf("%s page %d: cursor %q was already handed out by page %d; the cursor loops, stopped", g.what, n, next, at)
	}
	g.cursors[next] = n
	return nil
}

// recordID reads a record's id (a string or a number) without decoding the rest. When id is the
// object's first member, as the service sends it, it is read in place; otherwise the record is
// decoded for it.
func recordID(raw json.RawMessage) string {
	if id, ok := leadingID(raw); ok {
		return id
	}
	var r struct {
		ID json.RawMessage `json:"id"`
	}
	if gojson.Unmarshal(raw, &r) != nil || len(r.ID) == 0 || string(r.ID) == "null" {
		return ""
	}
	if r.ID[0] == '"' {
		var s string
		if gojson.Unmarshal(r.ID, &s) == nil {
			return s
		}
	}
	return string(r.ID)
}

// leadingID reads `{"id":"<plain string>"` at the start of raw; ok is false for anything else
// (escapes, other first members, numbers), which the decoder then handles.
func leadingID(raw []byte) (string, bool) {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	const head = `{"id":"`
	if !bytes.HasPrefix(raw, []byte(head)) {
		return "", false
	}
	rest := raw[len(head):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}
