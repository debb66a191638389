package sandbox

import (
	"bytes"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pageReq is a page request as applied (defaults and caps resolved).
type pageReq struct{ page, size int }

func intParam(q url.Values, name string) (int, bool, error) {
	v := q.Get(name)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, false, bad("%s: %q is not an integer", name, v)
	}
	return n, true, nil
}

// pageParams reads page and pageSize (or sizeName), applying defaults and the cap.
func (s *Server) pageParams(q url.Values, sizeNames ...string) (pageReq, error) {
	pg := pageReq{page: 1, size: 10}
	if n, ok, err := intParam(q, "page"); err != nil {
		return pg, err
	} else if ok && n > 1 {
		pg.page = n
	}
	for _, name := range sizeNames {
		n, ok, err := intParam(q, name)
		if err != nil {
			return pg, err
		}
		if ok {
			if n >= 1 {
				pg.size = min(n, s.opts.MaxPageSize)
			}
			break
		}
	}
	return pg, nil
}

// window is the slice of the newest-first order a page covers; the duplicate
// fault starts it one item early.
func (c *reqCtx) window(pg pageReq) (off, n int) {
	off = (pg.page - 1) * pg.size
	if c.fault.kind == FaultDuplicatePage && pg.page > 1 {
		off--
	}
	return off, pg.size
}

// pageOf collects one page of c in newest-first order among records matching keep.
func pageOf[T keyed](c *sortedColl[T], keep func(T) bool, off, n int) (items []T, total int) {
	if keep == nil {
		total = c.len()
		for i := off; i < off+n && i < total; i++ {
			items = append(items, c.desc(i))
		}
		return items, total
	}
	for i := 0; i < c.len(); i++ {
		v := c.desc(i)
		if !keep(v) {
			continue
		}
		if total >= off && total < off+n {
			items = append(items, v)
		}
		total++
	}
	return items, total
}

// list is the shared body of the paged /hl/v1 lists.
type list[T keyed] struct {
	coll     func(*world) *sortedColl[T]
	keep     func(T) bool
	totalKey string // "total", "totalCustomer" or "" (payment requests carry none)
	item     func(*enc, T)
	insert   func(w *world, at int64) // the insert-while-paging fault's new record
	// cacheKey names the list and filter so its matches, in list order, are
	// kept until the next change.
	cacheKey string
}

// filterCache keeps a filtered list's matches, newest first, for one state
// generation: a client paging a filtered list then costs a slice per page, not
// a scan of the whole collection.
type filterCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[string]any
}

// cachedFilter returns l's matches (all records when keep is nil) in the
// server's list order; the caller holds the read lock.
func cachedFilter[T keyed](s *Server, l list[T]) []T {
	fc := &s.filters
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.gen != s.gen || fc.entries == nil {
		fc.gen, fc.entries = s.gen, map[string]any{}
	}
	key := string(s.opts.ListOrder) + " " + l.cacheKey
	if v, ok := fc.entries[key]; ok {
		return v.([]T)
	}
	coll := l.coll(s.w)
	var all []T
	for i := 0; i < coll.len(); i++ {
		if v := coll.desc(i); l.keep == nil || l.keep(v) {
			all = append(all, v)
		}
	}
	reorder(all, s.opts.ListOrder, s.opts.Seed)
	fc.entries[key] = all
	return all
}

func serveList[T keyed](s *Server, c *reqCtx, l list[T]) {
	pg, err := s.pageParams(c.r.URL.Query(), "pageSize")
	if err != nil {
		c.fail(err)
		return
	}
	if c.fault.kind == FaultInsertWhilePaging && pg.page > 1 && l.insert != nil {
		s.mu.Lock()
		s.gen++
		l.insert(s.w, s.w.tick())
		s.mu.Unlock()
	}
	off, n := c.window(pg)
	s.mu.RLock()
	page := func(off int) (items []T, total int) {
		if (l.keep != nil || s.opts.ListOrder != OrderNewest) && l.cacheKey != "" {
			all := cachedFilter(s, l)
			total = len(all)
			if off < total {
				items = all[off:min(off+n, total)]
			}
			return items, total
		}
		return pageOf(l.coll(s.w), l.keep, off, n)
	}
	items, total := page(off)
	pageCount := (total + pg.size - 1) / pg.size
	shownAt := off
	sh := c.shapeList(pg, pageCount, total, &shownAt)
	if shownAt != off {
		items, _ = page(shownAt)
	}
	var again []T // conflicting_duplicate: page 1's first record, shown first in a second version
	if sh.conflict {
		if p1, _ := page(0); len(p1) > 0 {
			again = p1[:1]
		}
	}
	e := getEnc(s.w, c.fault.kind == FaultStringNumbers)
	e.open()
	e.k("statusCode")
	e.int(200)
	e.k("messages")
	e.str("success")
	e.k("hasMore")
	if sh.hasMoreString {
		e.str("false")
	} else {
		e.bool(sh.hasMore)
	}
	if !sh.unannounced {
		e.k("pageCount")
		e.int(int64(sh.pageCount))
	}
	e.k("pageSize")
	e.int(int64(pg.size))
	e.k("page")
	e.int(int64(pg.page))
	if l.totalKey != "" && !sh.unannounced {
		e.k(l.totalKey)
		if sh.nullData {
			total = 0
		}
		e.int(int64(total))
	}
	e.k("data")
	if sh.nullData {
		e.b = append(e.b, "null"...)
		e.close()
		s.mu.RUnlock()
		c.send(e.b)
		putEnc(e)
		return
	}
	dataAt := len(e.b)
	e.openA()
	for _, v := range again {
		start := len(e.b)
		l.item(e, v)
		rec := conflicted(append([]byte(nil), e.b[start:]...))
		e.b = append(e.b[:start], rec...)
	}
	for i, v := range items {
		start := len(e.b)
		l.item(e, v)
		if sh.synthetic {
			reid(e.b, start+bytes.IndexByte(e.b[start:], '{'), uint64(pg.page*pg.size+i))
		}
	}
	e.closeA()
	e.close()
	s.mu.RUnlock()
	if sh.dotIDs {
		e.b = dotIDs(e.b, dataAt)
	}
	if sh.echoKey {
		e.b = intoFirstName(e.b, dataAt, echoedKey(c.r))
	}
	if sh.badUTF8 {
		e.b = intoFirstName(e.b, dataAt, notUTF8)
	}
	c.send(e.b)
	putEnc(e)
}

// detail writes {"statusCode":200,"messages":"success","data":<one object>}.
func (s *Server) detail(c *reqCtx, write func(*enc) error) {
	s.mu.RLock()
	e := getEnc(s.w, c.fault.kind == FaultStringNumbers)
	e.open()
	e.k("statusCode")
	e.int(200)
	e.k("messages")
	e.str("success")
	e.k("data")
	err := write(e)
	e.close()
	s.mu.RUnlock()
	if err != nil {
		putEnc(e)
		c.fail(err)
		return
	}
	c.send(e.b)
	putEnc(e)
}

func (s *Server) productDetail(c *reqCtx) {
	raw := path.Base(c.r.URL.Path)
	s.detail(c, func(e *enc) error {
		id, err := parseID(raw)
		p := s.w.prodByID[id]
		if err != nil || p == nil {
			return missing("product %q not found", raw)
		}
		e.detail = true
		e.product(p, true)
		return nil
	})
}

func (s *Server) payReqDetail(c *reqCtx) {
	raw := path.Base(c.r.URL.Path)
	s.detail(c, func(e *enc) error {
		id, err := parseID(raw)
		p := s.w.prByID[id]
		if err != nil || p == nil {
			return missing("payment request %q not found", raw)
		}
		e.payReqDetail(p)
		return nil
	})
}

// parseMoment reads a credit-history bound: epoch ms, an ISO-8601 date or date-time.
// A bare date as an end bound means the whole day.
func parseMoment(name, v string, end bool) (int64, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return ms, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UnixMilli(), nil
	}
	if t, err := time.Parse("2006-01-02T15:04:05", v); err == nil {
		return t.UnixMilli(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			return t.Add(24*time.Hour).UnixMilli() - 1, nil
		}
		return t.UnixMilli(), nil
	}
	return 0, bad("%s: %q is not an ISO-8601 date, date-time or epoch milliseconds", name, v)
}

type historyQuery struct {
	pg                pageReq
	asc               bool
	from, to          int64
	walletType, typ   string
	productID, tierID string
}

func (s *Server) parseHistory(q url.Values) (historyQuery, error) {
	h := historyQuery{to: 1<<63 - 1}
	var err error
	if h.pg, err = s.pageParams(q, "limit", "pageSize"); err != nil {
		return h, err
	}
	switch f := q.Get("sortField"); f {
	case "", "datetime", "createdAt":
	default:
		return h, bad("sortField: %q is not supported (datetime)", f)
	}
	switch o := strings.ToLower(q.Get("sortOrder")); o {
	case "", "desc":
	case "asc":
		h.asc = true
	default:
		return h, bad("sortOrder: %q is not asc or desc", q.Get("sortOrder"))
	}
	if v := q.Get("startDate"); v != "" {
		if h.from, err = parseMoment("startDate", v, false); err != nil {
			return h, err
		}
	}
	if v := q.Get("endDate"); v != "" {
		if h.to, err = parseMoment("endDate", v, true); err != nil {
			return h, err
		}
	}
	h.walletType, h.typ = q.Get("walletType"), q.Get("type")
	h.productID, h.tierID = q.Get("productId"), q.Get("membershipTierId")
	return h, nil
}

func (h *historyQuery) keep(l *ledgerEntry) bool {
	return l.createdAt >= h.from && l.createdAt <= h.to &&
		(h.walletType == "" || l.walletType == h.walletType) &&
		(h.typ == "" || l.typ == h.typ) &&
		(h.productID == "" || l.prod.id.String() == h.productID) &&
		(h.tierID == "" || l.tierID.String() == h.tierID)
}

func (s *Server) creditHistory(c *reqCtx) {
	raw := path.Base(c.r.URL.Path)
	h, err := s.parseHistory(c.r.URL.Query())
	if err != nil {
		c.fail(err)
		return
	}
	id, idErr := parseID(raw)
	if c.fault.kind == FaultInsertWhilePaging && h.pg.page > 1 && idErr == nil {
		s.mu.Lock()
		s.gen++
		if cust := s.w.custByID[id]; cust != nil {
			s.w.spawnLedger(s.w.tick(), cust)
		}
		s.mu.Unlock()
	}
	e := getEnc(s.w, c.fault.kind == FaultStringNumbers)
	defer putEnc(e)
	s.mu.RLock()
	err = s.encodeHistory(e, c, raw, id, idErr, h)
	s.mu.RUnlock()
	if err != nil {
		c.fail(err)
		return
	}
	c.send(e.b)
}

func (s *Server) encodeHistory(e *enc, c *reqCtx, raw string, id ID, idErr error, h historyQuery) error {
	cust := s.w.custByID[id]
	if idErr != nil || cust == nil {
		return missing("customer %q not found", raw)
	}
	var match []*ledgerEntry
	for _, l := range s.historyOf(cust, c.fault.kind) {
		if h.keep(l) && l.visibleAt <= s.w.now {
			match = append(match, l)
		}
	}
	if !h.asc && !s.opts.CreditIgnoresSortOrder {
		slices.Reverse(match)
	}
	off, n := c.window(h.pg)
	total, pages := int64(len(match)), int64((len(match)+h.pg.size-1)/h.pg.size)
	endless := c.fault.kind == FaultEndlessCredit && s.w.ledger.len() > 0
	if endless {
		// every page a full page of new entries, and a history that never ends
		pages, total = endlessCreditPages, endlessCreditPages*int64(h.pg.size)
	}
	e.open()
	e.k("statusCode")
	e.int(200)
	e.k("message")
	e.str("success")
	e.k("total")
	e.int(total)
	e.k("page")
	e.int(int64(h.pg.page))
	e.k("limit")
	e.int(int64(h.pg.size))
	e.k("totalPages")
	e.int(pages)
	e.k("data")
	e.openA()
	if endless {
		template := s.w.ledger.items[0]
		if len(match) > 0 {
			template = match[0]
		}
		for i := range n {
			start := len(e.b)
			e.ledger(template)
			reid(e.b, start+bytes.IndexByte(e.b[start:], '{'), uint64(h.pg.page*n+i))
		}
	}
	for i := off; !endless && i < off+n && i < len(match); i++ {
		e.ledger(match[i])
	}
	e.closeA()
	e.close()
	return nil
}

func (s *Server) webhookHistory(c *reqCtx) {
	q := c.r.URL.Query()
	limit, ok, err := intParam(q, "limit")
	if err != nil {
		c.fail(err)
		return
	}
	if !ok || limit < 1 {
		limit = 10
	}
	limit = min(limit, 50)
	after := int64(-1 << 63)
	if v := q.Get("startingAfter"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil {
			c.fail(bad("startingAfter: %q is not epoch milliseconds", v))
			return
		}
	}
	if c.fault.kind == FaultInsertWhilePaging && q.Get("startingAfter") != "" {
		s.mu.Lock()
		s.gen++
		s.w.spawnMemberEvent(s.w.tick())
		s.mu.Unlock()
	}
	e := getEnc(s.w, c.fault.kind == FaultStringNumbers)
	defer putEnc(e)
	s.mu.RLock()
	s.encodeWebhooks(e, after, limit, c.fault.kind == FaultDuplicatePage && q.Get("startingAfter") != "", func(next string) string {
		if c.fault.kind != FaultCursorLoop {
			return next
		}
		return c.fault.state.loopNext(strconv.FormatInt(after, 10), next)
	})
	s.mu.RUnlock()
	c.send(e.b)
}

// encodeWebhooks writes the records after the cursor; early starts one record
// before it (the duplicate fault).
func (s *Server) encodeWebhooks(e *enc, after int64, limit int, early bool, next func(string) string) {
	items := s.w.webhooks.items
	i, _ := slices.BinarySearchFunc(items, after, func(h *webhook, t int64) int {
		if h.createdAt <= t {
			return -1
		}
		return 1
	})
	if early && i > 0 {
		i--
	}
	end := min(i+limit, len(items))
	e.open()
	e.k("statusCode")
	e.int(200)
	e.k("messages")
	e.str("success")
	e.k("data")
	e.openA()
	for _, h := range items[i:end] {
		e.webhook(h)
	}
	e.closeA()
	cur := ""
	if end < len(items) && end > i {
		cur = strconv.FormatInt(items[end-1].createdAt, 10)
	}
	cur = next(cur)
	e.k("hasMore")
	e.bool(cur != "")
	e.k("nextStartingAfter")
	if cur != "" {
		e.str(cur)
	} else {
		e.null()
	}
	e.close()
}
