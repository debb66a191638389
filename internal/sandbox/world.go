package sandbox

import (
	"cmp"
	"container/heap"
	"math/rand/v2"
	"slices"
	"strings"
)

// world is the whole simulated state. Every method expects the Server's lock.
type world struct {
	rng       *rand.Rand
	crng      *rand.Rand // the credit model's own stream (credit.go), so it moves nothing else
	now       int64      // simulated clock, epoch ms
	seedValue int64

	userID        ID
	merchantName  string
	merchantEmail string
	storefront    string // base of record URLs
	hookURL       string // webhook destination
	secret        []byte // HMAC key of checkout links

	customers sortedColl[*customer]
	products  sortedColl[*product]
	payReqs   sortedColl[*payReq]
	invoices  sortedColl[*invoice]
	unpaids   sortedColl[*unpaid]
	reviews   sortedColl[*review]
	ledger    sortedColl[*ledgerEntry]
	webhooks  sortedColl[*webhook] // createdAt strictly increasing
	// hookFloor: a new delivery is dated after the one added before it (moved to the next free
	// millisecond), since the service's clock set back (SetClock) only: 0 = the last delivery's.
	hookFloor int64
	licenses  []*license
	coupons   []*coupon

	creditTimes     CreditTimeFormat    // how credit-history records write createdAt
	recentCreates   map[string]int64    // invoice create key -> when, for the duplicate-request answer
	invByNoCustomer map[string]*invoice // extraData.noCustomer of invoices created through the API

	custByID    map[ID]*customer
	custByEmail map[string][]*customer // lower-cased e-mail, oldest first
	prodByID    map[ID]*product
	byType      map[string][]*product
	prByID      map[ID]*payReq
	invByID     map[ID]*invoice
	ledgerBy    map[ID][]*ledgerEntry // per customer, ascending
	balance     map[balanceKey]int64
	licenseBy   map[licenseKey]*license
	couponBy    map[string]*coupon // upper-cased code

	creditProducts []*product
	ledgerCusts    []*customer // customers holding a ledger, in first-entry order

	// bulk appends without ordering while seeding; seed sorts once at the end.
	bulk bool

	due dueQueue
	// creditLive: the credit model (credit.go) runs, from the first Advance on; users holds
	// each ledger holder's pace.
	creditLive bool
	users      map[ID]*creditUser
	// carry keeps the fractional part of expected event counts between Advance calls.
	carry map[string]float64

	// tables holds the collections declared without a field here (collections.go), by name;
	// streams their own random streams.
	tables  map[string]any
	streams map[string]*rand.Rand
}

type balanceKey struct{ cust, prod ID }

type licenseKey struct {
	code string
	prod ID
}

func newWorld(seed int64, now int64) *world {
	return &world{
		rng:             rand.New(rand.NewPCG(uint64(seed), 0x5eed5eed)),
		crng:            rand.New(rand.NewPCG(uint64(seed), 0xc4ed17)),
		now:             now,
		seedValue:       seed,
		merchantName:    "Toko Nusantara Digital",
		merchantEmail:   "finance@toko-nusantara.example",
		storefront:      StorefrontURL,
		hookURL:         "https://hooks.toko-nusantara.example/billing",
		custByID:        map[ID]*customer{},
		custByEmail:     map[string][]*customer{},
		prodByID:        map[ID]*product{},
		byType:          map[string][]*product{},
		prByID:          map[ID]*payReq{},
		invByID:         map[ID]*invoice{},
		ledgerBy:        map[ID][]*ledgerEntry{},
		balance:         map[balanceKey]int64{},
		licenseBy:       map[licenseKey]*license{},
		couponBy:        map[string]*coupon{},
		recentCreates:   map[string]int64{},
		invByNoCustomer: map[string]*invoice{},
		carry:           map[string]float64{},
		tables:          map[string]any{},
		streams:         map[string]*rand.Rand{},
	}
}

// StorefrontURL is the base of the URLs inside records (product pages, payment
// pages, images): fixed, so that responses do not depend on the request's Host.
const StorefrontURL = "https://toko-nusantara.myr.example"

func (w *world) newID() ID {
	var id ID
	a, b := w.rng.Uint64(), w.rng.Uint64()
	for i := 0; i < 8; i++ {
		id[i] = byte(a >> (8 * i))
		id[8+i] = byte(b >> (8 * i))
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// tick gives a write its own millisecond.
func (w *world) tick() int64 {
	w.now++
	return w.now
}

func put[T keyed](w *world, c *sortedColl[T], v T) {
	if w.bulk {
		c.items = append(c.items, v)
		return
	}
	c.insert(v)
}

func (w *world) addCustomer(c *customer) {
	put(w, &w.customers, c)
	w.custByID[c.id] = c
	k := strings.ToLower(c.email)
	w.custByEmail[k] = append(w.custByEmail[k], c)
}

func (w *world) renameCustomer(c *customer, to string, at int64) {
	old := strings.ToLower(c.email)
	list := w.custByEmail[old]
	for i, x := range list {
		if x == c {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(w.custByEmail, old)
	} else {
		w.custByEmail[old] = list
	}
	c.email = to
	c.updatedAt = at
	k := strings.ToLower(to)
	w.custByEmail[k] = append(w.custByEmail[k], c)
}

func (w *world) addProduct(p *product) {
	p.nameLower = strings.ToLower(p.name)
	put(w, &w.products, p)
	w.prodByID[p.id] = p
	w.byType[p.typ] = append(w.byType[p.typ], p)
	if p.creditUsage() {
		w.creditProducts = append(w.creditProducts, p)
	}
}

func (w *world) addPayReq(p *payReq) {
	put(w, &w.payReqs, p)
	w.prByID[p.id] = p
}

func (w *world) addInvoice(i *invoice) {
	put(w, &w.invoices, i)
	w.invByID[i.id] = i
}

func (w *world) addUnpaid(u *unpaid) {
	put(w, &w.unpaids, u)
	if u.payAt != 0 {
		heap.Push(&w.due, dueItem{at: u.payAt, kind: duePay, u: u})
	}
	if u.expireAt != 0 {
		heap.Push(&w.due, dueItem{at: u.expireAt, kind: dueExpire, u: u})
	}
}

func (w *world) dropUnpaid(u *unpaid) {
	if u.gone {
		return
	}
	u.gone = true
	w.unpaids.remove(u)
}

func (w *world) addLedger(l *ledgerEntry) {
	put(w, &w.ledger, l)
	list := w.ledgerBy[l.cust.id]
	if len(list) == 0 {
		w.ledgerCusts = append(w.ledgerCusts, l.cust)
	}
	// ascending by createdAt, a new entry after those of its millisecond: appended as the clock
	// runs, placed among them after the clock was set back (SetClock)
	i := len(list)
	for i > 0 && list[i-1].createdAt > l.createdAt {
		i--
	}
	w.ledgerBy[l.cust.id] = slices.Insert(list, i, l)
	w.balance[balanceKey{l.cust.id, l.prod.id}] += l.credit - l.debit
	w.creditAdded(l, len(list) == 0)
}

// addWebhook adds a delivery record in createdAt order, moving it after the delivery added
// before it (to the next free millisecond) so that createdAt stays unique and increasing as the
// clock runs. After the clock was set back (SetClock) the floor is the time it was set to: a
// delivery then lands before the ones dated by the clock's earlier reading, as a service whose
// clock an operator corrected lists it (history ascending by createdAt).
func (w *world) addWebhook(h *webhook) {
	floor := w.hookFloor
	if n := w.webhooks.len(); n > 0 && floor == 0 {
		floor = w.webhooks.items[n-1].createdAt
	}
	if h.createdAt <= floor && w.webhooks.len() > 0 {
		h.createdAt = floor + 1
	}
	items := w.webhooks.items
	i, taken := slices.BinarySearchFunc(items, h.createdAt, func(x *webhook, t int64) int { return cmp.Compare(x.createdAt, t) })
	for taken { // only after a set-back: the millisecond holds a delivery dated by the earlier reading
		h.createdAt++
		i, taken = slices.BinarySearchFunc(items, h.createdAt, func(x *webhook, t int64) int { return cmp.Compare(x.createdAt, t) })
	}
	w.webhooks.items = slices.Insert(items, i, h)
	if w.hookFloor != 0 {
		w.hookFloor = h.createdAt
	}
	if h.nextDelivery != 0 {
		heap.Push(&w.due, dueItem{at: h.nextDelivery, kind: dueDelivery, h: h})
	}
}

// Due transitions: payments, expiries and webhook deliveries happen at known times.

type dueKind int

const (
	duePay dueKind = iota
	dueExpire
	dueDelivery
	dueUse       // a customer's next use of credit
	dueVoid      // a credit entry's expiredAt
	dueTrial     // a customer's first use
	dueDashboard // the merchant's dashboard adds credit
)

type dueItem struct {
	at   int64
	kind dueKind
	u    *unpaid
	h    *webhook
	c    *customer
	l    *ledgerEntry
}

type dueQueue []dueItem

func (q dueQueue) Len() int { return len(q) }
func (q dueQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].kind < q[j].kind
}
func (q dueQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *dueQueue) Push(x any)   { *q = append(*q, x.(dueItem)) }
func (q *dueQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// queueExpiry schedules u's (changed) expiry; the old queue entry goes stale.
func (w *world) queueExpiry(u *unpaid) {
	if u.expireAt != 0 {
		heap.Push(&w.due, dueItem{at: u.expireAt, kind: dueExpire, u: u})
	}
}
