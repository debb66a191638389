package sandbox

import (
	"encoding/hex"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// enc is an append-only JSON writer: serving pages must stay far cheaper than
// decoding them, so records are written field by field without reflection.
type enc struct {
	b []byte
	// strNums writes integers as strings: the "numbers as strings" fault.
	strNums bool
	w       *world
	// detail selects the product detail shape (qty, userId; images without times).
	detail bool
}

var encPool = sync.Pool{New: func() any { return &enc{b: make([]byte, 0, 64<<10)} }}

func getEnc(w *world, strNums bool) *enc {
	e := encPool.Get().(*enc)
	e.b = e.b[:0]
	e.w = w
	e.strNums = strNums
	e.detail = false
	return e
}

func putEnc(e *enc) {
	if cap(e.b) > 8<<20 {
		return // do not pin huge buffers
	}
	e.w = nil
	encPool.Put(e)
}

// sep writes the comma a new member or element needs.
func (e *enc) sep() {
	if n := len(e.b); n > 0 {
		if c := e.b[n-1]; c != '{' && c != '[' && c != ':' {
			e.b = append(e.b, ',')
		}
	}
}

func (e *enc) k(name string) {
	e.sep()
	e.b = append(e.b, '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, '"', ':')
}

func (e *enc) open()   { e.sep(); e.b = append(e.b, '{') }
func (e *enc) close()  { e.b = append(e.b, '}') }
func (e *enc) openA()  { e.sep(); e.b = append(e.b, '[') }
func (e *enc) closeA() { e.b = append(e.b, ']') }
func (e *enc) null()   { e.sep(); e.b = append(e.b, "null"...) }

func (e *enc) bool(v bool) {
	e.sep()
	e.b = strconv.AppendBool(e.b, v)
}

func (e *enc) int(v int64) {
	e.sep()
	if e.strNums {
		e.b = append(e.b, '"')
		e.b = strconv.AppendInt(e.b, v, 10)
		e.b = append(e.b, '"')
		return
	}
	e.b = strconv.AppendInt(e.b, v, 10)
}

// intOrNull writes v, or null when v is 0.
func (e *enc) intOrNull(v int64) {
	if v == 0 {
		e.null()
		return
	}
	e.int(v)
}

func (e *enc) str(s string) {
	e.sep()
	e.b = appendQuoted(e.b, s)
}

func (e *enc) strOrNull(s string) {
	if s == "" {
		e.null()
		return
	}
	e.str(s)
}

func (e *enc) id(id ID) {
	e.sep()
	e.b = append(e.b, '"')
	e.b = appendUUID(e.b, id)
	e.b = append(e.b, '"')
}

func (e *enc) idOrNull(id ID) {
	if id.isZero() {
		e.null()
		return
	}
	e.id(id)
}

// objectID writes the first 12 bytes of id as 24 hex digits.
func (e *enc) objectID(id ID) {
	e.sep()
	var s [24]byte
	hex.Encode(s[:], id[:12])
	e.b = append(e.b, '"')
	e.b = append(e.b, s[:]...)
	e.b = append(e.b, '"')
}

func (e *enc) iso(ms int64) {
	e.sep()
	e.b = append(e.b, '"')
	e.b = appendISO(e.b, ms)
	e.b = append(e.b, '"')
}

func (e *enc) isoOrNull(ms int64) {
	if ms == 0 {
		e.null()
		return
	}
	e.iso(ms)
}

func appendISO(b []byte, ms int64) []byte {
	return time.UnixMilli(ms).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
}

const hexDigits = "0123456789abcdef"

// appendQuoted writes s as a JSON string; non-ASCII UTF-8 passes through.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Records, in the field order of the spec's tables.

func (e *enc) customer(c *customer) {
	e.open()
	e.k("id")
	e.id(c.id)
	e.k("createdAt")
	e.int(c.createdAt)
	e.k("email")
	e.str(c.email)
	e.k("mobile")
	e.str(c.mobile)
	e.k("name")
	e.str(c.name)
	e.k("status")
	e.str(c.status)
	e.k("updatedAt")
	e.int(c.updatedAt)
	e.k("userId")
	e.id(e.w.userID)
	e.close()
}

func (e *enc) image(im *image) {
	e.open()
	e.k("id")
	e.id(im.id)
	e.k("fileType")
	e.str(im.fileType)
	e.k("url")
	e.sep()
	e.b = append(e.b, '"')
	e.b = append(e.b, e.w.storefront...)
	e.b = append(e.b, "/media/images/"...)
	e.b = appendUUID(e.b, im.id)
	e.b = append(e.b, '.')
	e.b = append(e.b, im.fileType...)
	e.b = append(e.b, '"')
	if !e.detail {
		e.k("createdAt")
		e.int(im.createdAt)
		e.k("updatedAt")
		e.int(im.createdAt)
	}
	e.close()
}

func (e *enc) coverAndImages(cover *image, multiID ID) {
	e.k("coverImageId")
	if cover != nil {
		e.id(cover.id)
	} else {
		e.null()
	}
	e.k("multipleImageId")
	e.idOrNull(multiID)
	e.k("coverImage")
	if cover != nil {
		e.image(cover)
	} else {
		e.null()
	}
}

func (e *enc) images(images []image, name string) {
	e.k(name)
	if images == nil {
		e.null()
		return
	}
	e.openA()
	for i := range images {
		e.image(&images[i])
	}
	e.closeA()
}

func (e *enc) variant(v *variant) {
	e.open()
	e.k("id")
	e.id(v.id)
	e.k("name")
	e.str(v.name)
	e.k("description")
	e.str(v.description)
	e.k("amount")
	e.int(v.amount)
	e.k("limit")
	e.intOrNull(v.limit)
	e.k("notes")
	e.str(v.notes)
	e.k("redirectUrl")
	e.str("")
	e.k("status")
	e.str("ACTIVE")
	e.k("createdAt")
	e.int(v.createdAt)
	e.close()
}

// variantString is the variants array as the service stores it: a JSON string,
// always with real numbers whatever the numbers fault says.
func (e *enc) variantString(p *product) {
	if len(p.variants) == 0 {
		e.null()
		return
	}
	in := &enc{b: make([]byte, 0, 256*len(p.variants)), w: e.w}
	in.openA()
	for i := range p.variants {
		in.variant(&p.variants[i])
	}
	in.closeA()
	e.str(string(in.b))
}

func (e *enc) storeURL(parts ...string) {
	e.sep()
	e.b = append(e.b, '"')
	e.b = append(e.b, e.w.storefront...)
	for _, p := range parts {
		e.b = append(e.b, '/')
		e.b = append(e.b, p...)
	}
	e.b = append(e.b, '"')
}

func productPath(typ string) string {
	if typ == "generic_link" {
		return "plink"
	}
	return typ
}

// product writes a product; withVariants adds the variants array (search and detail).
func (e *enc) product(p *product, withVariants bool) {
	e.open()
	e.k("id")
	e.id(p.id)
	e.k("amount")
	e.int(p.amount)
	e.k("category")
	e.strOrNull(p.category)
	e.k("createdAt")
	e.int(p.createdAt)
	e.k("description")
	e.str(p.description)
	e.k("link")
	e.str(p.link)
	e.k("type")
	e.str(p.typ)
	e.k("subType")
	e.strOrNull(p.subType)
	e.k("status")
	e.str(p.status)
	e.k("name")
	e.str(p.name)
	e.k("limit")
	e.intOrNull(p.limit)
	e.k("redirectUrl")
	e.strOrNull(p.redirectURL)
	e.k("installmentId")
	e.null()
	e.k("variant")
	e.variantString(p)
	if withVariants {
		e.k("variants")
		e.openA()
		for i := range p.variants {
			e.variant(&p.variants[i])
		}
		e.closeA()
	}
	e.k("membershipTier")
	e.openA()
	for _, t := range p.tiers {
		e.open()
		e.k("id")
		e.id(t.id)
		e.k("name")
		e.str(t.name)
		e.close()
	}
	e.closeA()
	e.k("event")
	e.null()
	e.k("order")
	e.null()
	if e.detail {
		e.k("qty")
		e.null()
		e.k("userId")
		e.id(e.w.userID)
	}
	e.coverAndImages(p.cover, p.multiID)
	e.images(p.images, "multipleImage")
	e.k("transactions")
	e.openA()
	e.closeA()
	e.k("linkUrl")
	e.storeURL(productPath(p.typ), p.link)
	e.k("linkPayment")
	e.storeURL("pl", p.link)
	e.close()
}

func (e *enc) payReqItem(p *payReq) {
	e.open()
	e.k("id")
	e.id(p.id)
	e.k("amount")
	e.int(p.amount)
	e.k("category")
	e.null()
	e.k("createdAt")
	e.int(p.createdAt)
	e.k("description")
	e.str(p.description)
	e.k("link")
	e.str(p.link)
	e.k("type")
	e.str("payment_request")
	e.k("status")
	e.str(p.status)
	e.k("name")
	e.strOrNull(p.name)
	e.k("limit")
	e.null()
	e.k("redirectUrl")
	e.strOrNull(p.redirectURL)
	e.k("installmentId")
	e.null()
	e.k("event")
	e.null()
	e.k("order")
	e.null()
	e.coverAndImages(nil, ID{})
	e.k("multimpleImage")
	e.null()
	e.close()
}

func (e *enc) payReqDetail(p *payReq) {
	e.open()
	e.k("id")
	e.id(p.id)
	e.k("link")
	e.str(p.link)
	e.k("name")
	e.strOrNull(p.name)
	e.k("category")
	e.null()
	e.k("limit")
	e.null()
	e.k("type")
	e.str("payment_request")
	e.k("userId")
	e.id(e.w.userID)
	e.k("event")
	e.null()
	e.k("order")
	e.null()
	e.k("qty")
	e.null()
	e.k("amount")
	e.int(p.amount)
	e.k("status")
	e.str(p.status)
	e.k("description")
	e.str(p.description)
	e.coverAndImages(nil, ID{})
	e.k("multipleImage")
	e.null()
	e.close()
}

func (e *enc) invoice(i *invoice) {
	e.open()
	e.k("id")
	e.id(i.id)
	e.k("amount")
	e.int(i.amount)
	e.k("category")
	e.null()
	e.k("createdAt")
	e.int(i.createdAt)
	e.k("description")
	e.str(i.description)
	e.k("link")
	e.str(i.link)
	e.k("type")
	e.str("invoice")
	e.k("status")
	e.str(i.status)
	e.k("name")
	e.str(i.name)
	e.k("redirectUrl")
	e.strOrNull(i.redirectURL)
	e.k("customerId")
	e.id(i.cust.id)
	e.k("transactions")
	e.openA()
	e.open()
	e.k("id")
	e.id(i.txID)
	e.k("status")
	e.str(i.txStatus)
	e.close()
	e.closeA()
	e.k("customer")
	e.open()
	e.k("id")
	e.id(i.cust.id)
	e.k("email")
	e.str(i.cust.email)
	e.k("mobile")
	e.str(i.cust.mobile)
	e.k("name")
	e.str(i.cust.name)
	e.close()
	e.close()
}

func (e *enc) unpaid(u *unpaid) {
	e.open()
	e.k("id")
	e.id(u.id)
	e.k("createdAt")
	e.int(u.createdAt)
	e.k("type")
	e.str(u.typ)
	e.k("amount")
	e.int(u.amount)
	e.k("status")
	e.str("active")
	e.k("urlParamTrackingData")
	e.null()
	e.k("paymentLinkId")
	e.id(u.linkID())
	e.k("customerId")
	e.id(u.cust.id)
	e.k("customeField")
	e.null()
	e.k("customer")
	e.open()
	e.k("id")
	e.id(u.cust.id)
	e.k("email")
	e.str(u.cust.email)
	e.k("name")
	e.str(u.cust.name)
	e.k("mobile")
	e.str(u.cust.mobile)
	e.close()
	e.k("paymentLink")
	e.paymentLink(u)
	e.k("paymentUrl")
	e.sep()
	e.b = append(e.b, '"')
	e.b = append(e.b, e.w.storefront...)
	e.b = append(e.b, "/plt/"...)
	e.b = appendUUID(e.b, u.id)
	e.b = append(e.b, '"')
	e.close()
}

func (u *unpaid) linkID() ID {
	switch {
	case u.inv != nil:
		return u.inv.id
	case u.pr != nil:
		return u.pr.id
	default:
		return u.prod.id
	}
}

func (e *enc) paymentLink(u *unpaid) {
	var (
		id                   ID
		category             string
		createdAt            int64
		desc, link, name, rd string
		cover                *image
		images               []image
		multi                ID
	)
	switch {
	case u.inv != nil:
		i := u.inv
		id, createdAt, desc, link, name, rd = i.id, i.createdAt, i.description, i.link, i.name, i.redirectURL
	case u.pr != nil:
		p := u.pr
		id, createdAt, desc, link, name, rd = p.id, p.createdAt, p.description, p.link, p.name, p.redirectURL
	default:
		p := u.prod
		id, category, createdAt, desc, link, name, rd = p.id, p.category, p.createdAt, p.description, p.link, p.name, p.redirectURL
		cover, images, multi = p.cover, p.images, p.multiID
	}
	e.open()
	e.k("id")
	e.id(id)
	e.k("category")
	e.strOrNull(category)
	e.k("createdAt")
	e.int(createdAt)
	e.k("description")
	e.str(desc)
	e.k("link")
	e.str(link)
	e.k("name")
	e.str(name)
	e.k("redirectUrl")
	e.strOrNull(rd)
	e.k("userId")
	e.id(e.w.userID)
	e.coverAndImages(cover, multi)
	e.images(images, "multipleImage")
	e.close()
}

func (e *enc) review(r *review) {
	e.open()
	e.k("id")
	e.id(r.id)
	e.k("createdAt")
	e.int(r.createdAt)
	e.k("customerId")
	e.id(r.cust.id)
	e.k("message")
	e.str(r.message)
	e.k("paymentLinkId")
	e.id(r.prod.id)
	e.k("rating")
	e.int(r.rating)
	e.k("status")
	e.str("ACTIVE")
	e.k("updatedAt")
	e.int(r.updatedAt)
	e.k("userId")
	e.id(e.w.userID)
	e.k("multipleImage")
	e.openA()
	e.closeA()
	e.k("content")
	e.openA()
	e.closeA()
	e.k("customer")
	e.open()
	e.k("id")
	e.id(r.cust.id)
	e.k("name")
	e.str(r.cust.name)
	e.close()
	e.k("paymentLink")
	e.open()
	e.k("id")
	e.id(r.prod.id)
	e.k("name")
	e.str(r.prod.name)
	e.k("type")
	e.str(r.prod.typ)
	e.k("link")
	e.str(r.prod.link)
	e.k("subType")
	e.strOrNull(r.prod.subType)
	e.close()
	e.close()
}

func (e *enc) ledger(l *ledgerEntry) {
	e.open()
	e.k("id")
	e.objectID(l.id)
	e.k("createdAt")
	if l.epochSecs {
		e.int(l.createdAt / 1000)
	} else {
		e.sep()
		e.b = append(e.b, '"')
		e.b = appendCreditTime(e.b, l.createdAt, e.w.creditTimes)
		e.b = append(e.b, '"')
	}
	e.k("credit")
	e.int(l.credit)
	e.k("debit")
	e.int(l.debit)
	e.k("productId")
	e.id(l.prod.id)
	e.k("status")
	e.str("ACTIVE")
	e.k("customerId")
	e.id(l.cust.id)
	e.k("merchantId")
	e.id(e.w.userID)
	e.k("expiredAt")
	e.isoOrNull(l.expiredAt)
	e.k("walletType")
	e.str(l.walletType)
	e.k("type")
	e.str(l.typ)
	e.close()
}

func (e *enc) webhook(h *webhook) {
	e.open()
	e.k("id")
	e.id(h.id)
	e.k("userId")
	e.id(e.w.userID)
	e.k("createdAt")
	e.iso(h.createdAt)
	e.k("updatedAt")
	e.isoOrNull(h.updatedAt)
	e.k("nextDelivery")
	e.isoOrNull(h.nextDelivery)
	e.k("payload")
	in := &enc{b: make([]byte, 0, 1024), w: e.w}
	in.payload(h)
	e.str(string(in.b))
	e.k("paymentLinkId")
	e.idOrNull(h.linkID)
	e.k("paymentLinkTransactionId")
	e.idOrNull(h.txID)
	e.k("responsePayload")
	e.strOrNull(h.response)
	e.k("source")
	e.str("AUTOMATIC")
	e.k("status")
	e.str(h.status)
	e.k("type")
	e.str(h.event)
	e.k("Webhooktype")
	e.null()
	e.k("urlDestination")
	e.str(e.w.hookURL)
	e.close()
}

// payload writes the event body; its times are epoch ms like the /hl/v1 records.
func (e *enc) payload(h *webhook) {
	d := &h.data
	e.open()
	e.k("event")
	e.str(h.event)
	e.k("data")
	e.open()
	if h.event == eventMemberExpired {
		e.k("merchantId")
		e.id(e.w.userID)
		e.k("merchantName")
		e.str(e.w.merchantName)
		e.k("status")
		e.str(d.status)
		e.k("memberId")
		e.id(d.txID)
		e.k("customerId")
		e.id(d.custID)
		e.k("customerName")
		e.str(d.custName)
		e.k("customerEmail")
		e.str(d.custEmail)
		e.k("customerMobile")
		e.str(d.mob)
		e.close()
		e.close()
		return
	}
	e.k("id")
	e.id(d.txID)
	e.k("transactionId")
	e.id(d.txID)
	e.k("status")
	e.str(d.status)
	e.k("transactionStatus")
	e.str(d.txStatus)
	e.k("createdAt")
	e.int(d.at)
	e.k("updatedAt")
	e.int(d.at)
	e.k("merchantId")
	e.id(e.w.userID)
	e.k("merchantEmail")
	e.str(e.w.merchantEmail)
	e.k("customerId")
	e.id(d.custID)
	e.k("customerName")
	e.str(d.custName)
	e.k("customerEmail")
	e.str(d.custEmail)
	e.k("customerMobile")
	e.str(d.mob)
	e.k("amount")
	e.int(d.amount)
	e.k("paymentLinkAmount")
	e.int(d.amount)
	e.k("isAdminFeeBorneByCustomer")
	e.bool(false)
	e.k("isChannelFeeBorneByCustomer")
	e.bool(false)
	e.k("productId")
	e.id(d.linkID)
	e.k("productName")
	e.str(d.prodName)
	e.k("productType")
	e.str(d.prodType)
	e.k("pixelFbp")
	e.null()
	e.k("pixelFbc")
	e.null()
	e.k("qty")
	e.int(1)
	e.k("couponUsed")
	e.null()
	e.k("paymentMethod")
	e.strOrNull(d.method)
	e.k("paymentUrl")
	e.sep()
	e.b = append(e.b, '"')
	e.b = append(e.b, e.w.storefront...)
	e.b = append(e.b, "/plt/"...)
	e.b = appendUUID(e.b, d.txID)
	e.b = append(e.b, '"')
	e.close()
	e.close()
}

func (e *enc) license(l *license) {
	e.open()
	e.k("licenseCode")
	e.str(l.code)
	e.k("productId")
	e.id(l.prod.id)
	e.k("customerId")
	e.id(l.cust.id)
	e.k("status")
	e.str(l.status)
	e.k("createdAt")
	e.int(l.createdAt)
	e.k("updatedAt")
	e.int(l.updatedAt)
	e.close()
}

func (e *enc) coupon(c *coupon) {
	e.open()
	e.k("id")
	e.id(c.id)
	e.k("code")
	e.str(c.code)
	e.k("discountType")
	e.str(c.discountType)
	e.k("discountValue")
	e.int(c.value)
	e.k("minimumPurchase")
	if c.hasMin {
		e.int(c.minPurchase)
	} else {
		e.null()
	}
	e.k("eligibleCustomerType")
	e.str(c.eligible)
	e.close()
}

// couponDump adds what validation evaluates but the response does not show.
func (e *enc) couponDump(c *coupon) {
	e.coupon(c)
	e.b = e.b[:len(e.b)-1]
	e.k("expiresAt")
	e.intOrNull(c.expiresAt)
	e.k("paymentLinkId")
	if c.prod != nil {
		e.id(c.prod.id)
	} else {
		e.null()
	}
	e.k("createdAt")
	e.int(c.createdAt)
	e.close()
}
