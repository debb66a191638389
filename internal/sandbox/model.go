package sandbox

import (
	"bytes"
	"encoding/hex"
	"errors"
	"slices"
)

// ID is a record identifier, printed as a UUID. The zero ID means "none" (null).
type ID [16]byte

func (id ID) isZero() bool { return id == ID{} }

func (id ID) String() string { return string(appendUUID(nil, id)) }

func appendUUID(b []byte, id ID) []byte {
	var s [36]byte
	hex.Encode(s[0:8], id[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], id[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], id[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], id[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], id[10:16])
	return append(b, s[:]...)
}

func parseID(s string) (ID, error) {
	var id ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, errors.New("not a UUID")
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return id, errors.New("not a UUID")
	}
	return id, nil
}

type image struct {
	id        ID
	fileType  string
	createdAt int64
}

type variant struct {
	id          ID
	name        string
	description string
	amount      int64
	limit       int64 // 0 = null
	notes       string
	createdAt   int64
}

type tier struct {
	id   ID
	name string
}

type product struct {
	id          ID
	amount      int64
	category    string // "" = null
	createdAt   int64
	description string
	link        string
	typ         string
	subType     string // "" = null
	status      string
	name        string
	nameLower   string
	limit       int64 // 0 = null
	redirectURL string
	variants    []variant
	tiers       []tier
	cover       *image
	images      []image
	multiID     ID
}

func (p *product) key() (int64, ID) { return p.createdAt, p.id }

func (p *product) creditUsage() bool {
	return (p.typ == "saas" || p.typ == "membership") && p.subType == "credit_usage"
}

type customer struct {
	id        ID
	createdAt int64
	updatedAt int64
	email     string
	mobile    string
	name      string
	status    string
}

func (c *customer) key() (int64, ID) { return c.createdAt, c.id }

func (c *customer) changedAt() int64 { return max(c.updatedAt, c.createdAt) }

type payReq struct {
	id          ID
	amount      int64
	createdAt   int64
	description string
	link        string
	status      string
	name        string
	redirectURL string
	cust        *customer
	expiredAt   int64
	unpaid      *unpaid
}

func (p *payReq) key() (int64, ID) { return p.createdAt, p.id }

type invoice struct {
	id          ID
	txID        ID
	amount      int64
	createdAt   int64
	description string
	link        string
	status      string
	txStatus    string
	name        string
	redirectURL string
	cust        *customer
	expiredAt   int64
	unpaid      *unpaid
}

func (i *invoice) key() (int64, ID) { return i.createdAt, i.id }

// unpaid is an open transaction; it points at exactly one of inv, pr, prod.
type unpaid struct {
	id        ID
	createdAt int64
	typ       string
	amount    int64
	cust      *customer
	inv       *invoice
	pr        *payReq
	prod      *product
	payAt     int64 // when it will be paid; 0 = never
	expireAt  int64 // when it closes; 0 = never
	gone      bool
	credit    int64       // a top-up checkout: the credit it buys
	buyer     *creditUser // and the customer's model, told when it settles
}

func (u *unpaid) key() (int64, ID) { return u.createdAt, u.id }

type review struct {
	id        ID
	createdAt int64
	updatedAt int64
	cust      *customer
	prod      *product
	rating    int64
	message   string
}

func (r *review) key() (int64, ID) { return r.createdAt, r.id }

func (r *review) changedAt() int64 { return max(r.updatedAt, r.createdAt) }

type ledgerEntry struct {
	id         ID // printed as 24 hex digits, like the service's ObjectIds
	createdAt  int64
	credit     int64
	debit      int64
	prod       *product
	cust       *customer
	expiredAt  int64 // 0 = null
	walletType string
	typ        string
	tierID     ID
	visibleAt  int64 // shown in the credit history from then on (simulated clock); 0 = at once
	epochSecs  bool  // createdAt shown as epoch seconds (the topupEpochSeconds fault)
}

func (l *ledgerEntry) key() (int64, ID) { return l.createdAt, l.id }

// eventData is a snapshot of what a webhook's payload describes.
type eventData struct {
	txID, linkID, custID     ID
	custName, custEmail, mob string
	amount                   int64
	prodName, prodType       string
	status, txStatus         string
	method                   string
	at                       int64
}

type webhook struct {
	id           ID
	createdAt    int64
	updatedAt    int64 // 0 = null
	nextDelivery int64 // 0 = null
	event        string
	status       string
	attempts     int
	response     string // "" = null
	linkID       ID
	txID         ID
	data         eventData
	credit       bool // a top-up's payment: its deliveries draw from the credit model's stream
}

func (w *webhook) key() (int64, ID) { return w.createdAt, w.id }

type license struct {
	code      string
	prod      *product
	cust      *customer
	status    string
	createdAt int64
	updatedAt int64
}

type coupon struct {
	id           ID
	code         string
	discountType string
	value        int64
	minPurchase  int64 // meaningful when hasMin
	hasMin       bool
	eligible     string
	expiresAt    int64 // 0 = never
	prod         *product
	createdAt    int64
	// Set only on the fixed coupons of seedRuleCoupons, so the seeded random ones are unchanged.
	inactive      bool
	startsAt      int64    // 0 = always
	excludedTypes []string // product types it does not apply to
	usageLimit    int      // 0 = unlimited
	used          int
}

// keyed records sort by createdAt, then id.
type keyed interface{ key() (int64, ID) }

func cmpKey(a, b keyed) int {
	ta, ia := a.key()
	tb, ib := b.key()
	if ta != tb {
		if ta < tb {
			return -1
		}
		return 1
	}
	return bytes.Compare(ia[:], ib[:])
}

// sortedColl keeps records in ascending (createdAt, id) order; lists read it backwards.
type sortedColl[T keyed] struct{ items []T }

func (c *sortedColl[T]) insert(v T) {
	n := len(c.items)
	if n == 0 || cmpKey(c.items[n-1], v) < 0 {
		c.items = append(c.items, v)
		return
	}
	i, _ := slices.BinarySearchFunc(c.items, v, func(a, b T) int { return cmpKey(a, b) })
	c.items = slices.Insert(c.items, i, v)
}

func (c *sortedColl[T]) remove(v T) bool {
	i, ok := slices.BinarySearchFunc(c.items, v, func(a, b T) int { return cmpKey(a, b) })
	if !ok {
		return false
	}
	c.items = slices.Delete(c.items, i, i+1)
	return true
}

func (c *sortedColl[T]) sort() {
	slices.SortFunc(c.items, func(a, b T) int { return cmpKey(a, b) })
}

// desc returns the i-th record newest first.
func (c *sortedColl[T]) desc(i int) T { return c.items[len(c.items)-1-i] }

func (c *sortedColl[T]) len() int { return len(c.items) }
