package sandbox

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
)

// The simulator's collections, declared. Each entry of collections says what a kind of record is
// called (Dump, Collections), how it is stored, which GET endpoints read it and in which envelope,
// how a record is written, and, for a collection outside the core history, how it is generated at a
// scale, seeded and evolved. Routes, Dump and the list machinery read this table only: list orders
// (order.go) and list faults (faults.go, misbehave.go) apply to every paged list declared here
// without code of their own.
//
// The core history (customers, products, payment requests, invoices, unpaid transactions, reviews,
// the credit ledger, webhook deliveries, licenses, coupons) is seeded by seed.go and evolved by
// clock.go on the world's main random stream, interleaved because its records point at each other:
// its declarations name no generator. Any other collection declares gen and draws from a random
// stream of its own (named after it), so declaring it changes no byte of any other collection.
//
// A new paged list: a file with its record type, key, encoding (an enc method), generator and
// table declaration, one line below, and its test.
var collections = []collection{
	customers.collection(),
	products.collection(),
	payReqs.collection(),
	invoices.collection(),
	unpaids.collection(),
	reviews.collection(),
	ledger.collection(),
	webhooks.collection(),
	{name: "licenses", size: func(w *world) int { return len(w.licenses) }, dump: func(w *world, e *enc, add func(func())) {
		for _, l := range w.licenses {
			add(func() { e.license(l) })
		}
	}},
	{name: "coupons", size: func(w *world) int { return len(w.coupons) }, dump: func(w *world, e *enc, add func(func())) {
		for _, c := range w.coupons {
			add(func() { e.couponDump(c) })
		}
	}},
}

var customers = &table[*customer]{
	name: "customers",
	rows: func(w *world) *sortedColl[*customer] { return &w.customers },
	item: (*enc).customer,
	pages: []pages[*customer]{{
		path: "/hl/v1/customer", totalKey: "totalCustomer",
		insert: func(w *world, at int64, _ url.Values, _ string) { w.spawnCustomer(at) },
	}},
}

var products = &table[*product]{
	name: "products",
	rows: func(w *world) *sortedColl[*product] { return &w.products },
	item: func(e *enc, p *product) { e.product(p, true) },
	pages: []pages[*product]{{
		// search is a case-insensitive substring of the name; without it every product, deleted ones too
		path: "/hl/v1/product", totalKey: "total",
		filter: func(q url.Values, _ string) (string, func(*product) bool, error) {
			text := strings.ToLower(strings.TrimSpace(q.Get("search")))
			if text == "" {
				return "?search=", nil, nil
			}
			return "?search=" + text, func(p *product) bool { return strings.Contains(p.nameLower, text) }, nil
		},
		insert: func(w *world, at int64, q url.Values, _ string) {
			w.addProduct(w.genProductActive(at, productTypes[w.rng.IntN(len(productTypes))], q.Get("search")))
		},
	}, {
		// by type, deleted products left out, in the list shape (no variants array)
		path: "/hl/v1/product/type/", totalKey: "total",
		item: func(e *enc, p *product) { e.product(p, false) },
		filter: func(_ url.Values, typ string) (string, func(*product) bool, error) {
			if !slices.Contains(productTypes, typ) {
				return "", nil, bad("type: %q is not a product type (one of %s)", typ, strings.Join(productTypes, ", "))
			}
			return "", func(p *product) bool { return p.typ == typ && p.status != "deleted" }, nil
		},
		insert: func(w *world, at int64, _ url.Values, typ string) { w.addProduct(w.genProductActive(at, typ, "")) },
	}},
	more: []route{{path: "/hl/v1/product/", serve: (*Server).productDetail}},
}

var payReqs = &table[*payReq]{
	name: "payment_requests",
	rows: func(w *world) *sortedColl[*payReq] { return &w.payReqs },
	item: (*enc).payReqItem,
	pages: []pages[*payReq]{{
		path: "/hl/v1/payment", // the spec's payment-request list carries no total
		filter: func(q url.Values, _ string) (string, func(*payReq) bool, error) {
			v := q.Get("status")
			switch v {
			case "":
				return "?status=", nil, nil
			case "active":
				return "?status=" + v, func(p *payReq) bool { return p.status == "unpaid" || p.status == "active" }, nil
			case "paid":
				return "?status=" + v, func(p *payReq) bool { return p.status == "paid" }, nil
			case "close", "closed":
				return "?status=" + v, func(p *payReq) bool { return p.status == "closed" }, nil
			}
			return "", nil, bad("status: %q is not one of active, paid, closed", v)
		},
		insert: func(w *world, at int64, _ url.Values, _ string) { w.spawnPayReq(at) },
	}},
	more: []route{{path: "/hl/v1/payment/", serve: (*Server).payReqDetail}},
}

var invoices = &table[*invoice]{
	name: "invoices",
	rows: func(w *world) *sortedColl[*invoice] { return &w.invoices },
	item: (*enc).invoice,
	pages: []pages[*invoice]{{
		path: "/hl/v1/invoice", totalKey: "total",
		filter: func(q url.Values, _ string) (string, func(*invoice) bool, error) {
			v := q.Get("sort")
			if v == "" {
				return "?sort=", nil, nil
			}
			st, ok := map[string]string{"active": "active", "paid": "paid", "close": "closed", "closed": "closed"}[v]
			if !ok {
				return "", nil, bad("sort: %q is not one of active, paid, close, closed", v)
			}
			return "?sort=" + v, func(i *invoice) bool { return i.status == st }, nil
		},
		insert: func(w *world, at int64, _ url.Values, _ string) { w.spawnInvoice(at) },
	}},
}

var unpaids = &table[*unpaid]{
	name: "unpaid_transactions",
	rows: func(w *world) *sortedColl[*unpaid] { return &w.unpaids },
	item: (*enc).unpaid,
	pages: []pages[*unpaid]{{
		path: "/hl/v1/transactions/unpaid", totalKey: "total",
		insert: func(w *world, at int64, _ url.Values, _ string) { w.spawnInvoice(at) },
	}},
}

var reviews = &table[*review]{
	name: "reviews",
	rows: func(w *world) *sortedColl[*review] { return &w.reviews },
	item: (*enc).review,
	pages: []pages[*review]{{
		path: "/hl/v1/reviews", totalKey: "total",
		insert: func(w *world, at int64, _ url.Values, _ string) { w.spawnReview(at) },
	}},
}

// ledger is read per customer through the credit history (lists.go), whose envelope is its own.
var ledger = &table[*ledgerEntry]{
	name: "credit_ledger",
	rows: func(w *world) *sortedColl[*ledgerEntry] { return &w.ledger },
	item: (*enc).ledger,
	more: []route{{path: "/credit/v1/credit/customer/paginate-credit-history/", serve: (*Server).creditHistory}},
}

// webhooks are read through a cursor on createdAt (lists.go), oldest first.
var webhooks = &table[*webhook]{
	name:      "webhook_deliveries",
	rows:      func(w *world) *sortedColl[*webhook] { return &w.webhooks },
	item:      (*enc).webhook,
	ascending: true,
	more:      []route{{path: "/hl/v2/webhooks/new-history", serve: (*Server).webhookHistory}},
}

// collection is a declaration with its record type erased, as the routes, Dump, seed and Advance
// read it.
type collection struct {
	name string
	// dump writes every record, each by add, in the order Dump documents; size counts them.
	dump   func(w *world, e *enc, add func(func()))
	size   func(w *world) int
	routes []route
	// seed and evolve are nil for the core history; otherwise they run on the collection's own stream.
	seed   func(w *world, scale float64, start int64)
	evolve func(w *world, t0, dms int64, scale float64)
}

// route is one GET endpoint. A path ending in "/" is a prefix followed by exactly one non-empty
// segment (an id, a product type).
type route struct {
	path  string
	serve func(*Server, *reqCtx)
}

// table declares a collection of records kept in (createdAt, id) order.
type table[T keyed] struct {
	name string
	// rows is where the world keeps the records; nil keeps them under the name (no field in world).
	rows func(*world) *sortedColl[T]
	// item writes one record as Dump and the lists (unless a list says otherwise) show it.
	item func(*enc, T)
	// ascending dumps oldest first (the order its endpoint reads); else newest first, as the lists.
	ascending bool
	pages     []pages[T] // the paged /hl/v1 lists reading it
	more      []route    // other endpoints reading it (details, histories), served by their own code

	// A collection outside the core history: gen makes one record created at the given time,
	// from the collection's own random stream (w.rng is that stream while gen runs). base
	// records at Scale 1 (at least least) are seeded at uniform times over the seeded history,
	// and perDay more appear on Advance at Scale 1; the insert-while-paging fault adds one too.
	gen    func(w *world, at int64) T
	base   int
	least  int
	perDay float64
}

// pages declares one paged list: page (default 1) and pageSize (default 10, capped), answered
// {statusCode, messages, hasMore, pageCount, pageSize, page, <totalKey>, data}.
type pages[T keyed] struct {
	path     string // exact, or a prefix ending in "/" whose one more segment is given to filter and insert
	totalKey string // "total", "totalCustomer", or "" for a list that carries none
	item     func(*enc, T)
	// filter reads the query: the selection's name (for the list cache), which records it keeps
	// (nil: all), or a bad request.
	filter func(q url.Values, rest string) (string, func(T) bool, error)
	// insert adds the new record of the insert-while-paging fault; nil: one from the table's gen.
	insert func(w *world, at int64, q url.Values, rest string)
}

// collection erases t's record type.
func (t *table[T]) collection() collection {
	if t.rows == nil {
		name := t.name
		t.rows = func(w *world) *sortedColl[T] {
			if c, ok := w.tables[name]; ok {
				return c.(*sortedColl[T])
			}
			c := &sortedColl[T]{}
			w.tables[name] = c
			return c
		}
	}
	c := collection{name: t.name, dump: t.dump, size: func(w *world) int { return t.rows(w).len() }, routes: slices.Clone(t.more)}
	for _, p := range t.pages {
		c.routes = append(c.routes, route{path: p.path, serve: t.serve(p)})
	}
	if t.gen != nil {
		c.seed, c.evolve = t.seed, t.evolve
	}
	return c
}

func (t *table[T]) dump(w *world, e *enc, add func(func())) {
	rows := t.rows(w)
	for i := 0; i < rows.len(); i++ {
		v := rows.desc(i)
		if t.ascending {
			v = rows.items[i]
		}
		add(func() { t.item(e, v) })
	}
}

// serve answers the list p.
func (t *table[T]) serve(p pages[T]) func(*Server, *reqCtx) {
	item := p.item
	if item == nil {
		item = t.item
	}
	name := strings.TrimPrefix(p.path, "/hl/v1/")
	return func(s *Server, c *reqCtx) {
		q := c.r.URL.Query()
		rest := ""
		if strings.HasSuffix(p.path, "/") {
			rest = strings.TrimPrefix(c.r.URL.Path, p.path)
		}
		var key string
		var keep func(T) bool
		if p.filter != nil {
			var err error
			if key, keep, err = p.filter(q, rest); err != nil {
				c.fail(err)
				return
			}
		}
		insert := func(w *world, at int64) { p.insert(w, at, q, rest) }
		if p.insert == nil {
			insert = func(w *world, at int64) { t.spawn(w, at) }
		}
		serveList(s, c, list[T]{
			cacheKey: name + rest + key,
			coll:     t.rows,
			keep:     keep,
			totalKey: p.totalKey,
			item:     item,
			insert:   insert,
		})
	}
}

// spawn adds one generated record created at `at`, from the collection's own stream.
func (t *table[T]) spawn(w *world, at int64) {
	w.onStream(t.name, func() { put(w, t.rows(w), t.gen(w, at)) })
}

func (t *table[T]) seed(w *world, scale float64, start int64) {
	w.onStream(t.name, func() {
		rows := t.rows(w)
		for i, n := 0, scaled(t.base, scale, t.least); i < n; i++ {
			put(w, rows, t.gen(w, w.between(start, w.now-1)))
		}
		rows.sort()
	})
}

func (t *table[T]) evolve(w *world, t0, dms int64, scale float64) {
	if t.perDay == 0 {
		return
	}
	w.onStream(t.name, func() {
		k := "collection/" + t.name
		exp := t.perDay*float64(dms)/float64(day)*scale + w.carry[k]
		n := int(math.Floor(exp))
		w.carry[k] = exp - float64(n)
		at := make([]int64, n)
		for i := range at {
			at[i] = t0 + 1 + w.rng.Int64N(dms)
		}
		slices.Sort(at)
		for _, a := range at {
			put(w, t.rows(w), t.gen(w, a))
		}
	})
}

// onStream runs f with w.rng set to the named collection's own random stream, so that what f draws
// moves nothing else.
func (w *world) onStream(name string, f func()) {
	r, ok := w.streams[name]
	if !ok {
		h := fnv.New64a()
		h.Write([]byte(name))
		r = rand.New(rand.NewPCG(uint64(w.seedValue), h.Sum64()))
		w.streams[name] = r
	}
	main := w.rng
	w.rng = r
	defer func() { w.rng = main }()
	f()
}

// getRoutes are the declared GET endpoints: exact paths, and the prefixes ending in "/".
type getRoutes struct {
	exact    map[string]func(*Server, *reqCtx)
	prefixes []route
}

// declaredRoutes reads the routes of the collections declared when a Server is made.
func declaredRoutes() getRoutes {
	g := getRoutes{exact: map[string]func(*Server, *reqCtx){}}
	for _, c := range collections {
		for _, r := range c.routes {
			if strings.HasSuffix(r.path, "/") {
				g.prefixes = append(g.prefixes, r)
			} else {
				g.exact[r.path] = r.serve
			}
		}
	}
	return g
}

// find gives the declared endpoint of path p.
func (g *getRoutes) find(p string) (func(*Server, *reqCtx), bool) {
	if fn, ok := g.exact[p]; ok {
		return fn, true
	}
	for _, r := range g.prefixes {
		if rest, ok := strings.CutPrefix(p, r.path); ok && rest != "" && !strings.Contains(rest, "/") {
			return r.serve, true
		}
	}
	return nil, false
}

// Collections that Dump knows, in the order of the declarations.
var Collections = func() []string {
	names := make([]string, len(collections))
	for i, c := range collections {
		names[i] = c.name
	}
	return names
}()
