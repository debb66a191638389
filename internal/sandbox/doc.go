// Package sandbox simulates the commerce and billing service of
// shared/spec/commerce-api.md: a stateful, seeded, deterministic http.Handler
// serving all 21 endpoints, with a controllable clock and injectable faults, so
// that the rest of billsync can be tested without the real service.
//
// It is an independent reading of the spec and imports nothing from billsync.
//
// # Conventions where the spec says "not shown"
//
// Auth: a missing or wrong key gets 401 {"statusCode":401,"messages":"Unauthorized"};
// the read-only key doing a POST gets 403
// {"statusCode":403,"messages":"API KEY Scope not allowed to write"}.
//
// Errors: bad input gets 400 {"statusCode":400,"messages":"<field>: <problem>"};
// unknown ids get 404 with a message naming the id; rate limiting gets 429 with a
// Retry-After header in seconds. Error bodies always use "messages". Where the
// service documents its answers they are given exactly (answers.go): invoice create
// 400 "Validation Error" / "extraData Validation Error", 404 when the customer cannot
// be found or created (a malformed e-mail), 409 "already exist" (an extraData.noCustomer
// used before), 429 "Duplicate request detected. Please wait 1 minute before trying
// again." for the same create within a simulated minute (no Retry-After); payment edit
// 404 "Payment not found" and 409 "Transaction already paid. Cannot edit payment
// request."; customer update 400 "Validation Error" and 404 for an unknown fromEmail;
// coupon validate 404 for an unknown code or payment link and 400 for each reason a
// coupon does not apply, with Indonesian texts; 200 only for a valid coupon.
// Coupon validation does not require finalAmount (the payment link's amount is
// used instead) and invoice creation does not require extraData (echoed as null).
// Payment edit accepts redirectURL and redirectUrl.
//
// Lists (/hl/v1 invoice, payment, product/type, product?search, transactions/unpaid,
// customer, reviews): page (default 1, < 1 means 1) and pageSize (default 10,
// < 1 means 10, capped at Options.MaxPageSize); pageCount = ceil(total/pageSize);
// a page past the end has empty data and hasMore false. Order is
// Options.ListOrder (the spec leaves it open and the real service's examples
// are in no createdAt order): OrderNewest (default) is createdAt desc, then id
// desc; OrderUpdated is the last change first (customers and reviews by
// updatedAt, other records by createdAt), ties newest first; OrderShuffle is a
// stable order hashed from Seed and each record's id, the same on every page,
// where a new record lands anywhere. Invoice ?sort= takes active, paid, close or
// closed; payment ?status= takes active (matches unpaid and active), paid,
// close or closed. /hl/v1/product without search lists every product; search
// is a case-insensitive substring match on the name and includes deleted
// products; product/type lists leave deleted products out.
//
// The collections are declared in one table (collections.go): each one's name in Dump,
// the endpoints reading it and their envelope, how a record is written, and, for a
// collection outside the core history, how it is generated, seeded and evolved (from a
// random stream of its own, so it moves no byte of the others). The list orders and the
// list faults apply to every paged list declared there.
//
// Credit history: limit (default 10, capped at MaxPageSize; pageSize is an
// alias), page, sortField datetime|createdAt, sortOrder asc|desc (default desc),
// startDate/endDate as ISO-8601 date, date-time or epoch ms, both inclusive,
// and filters walletType, type, productId, membershipTierId. An existing
// customer without ledger gets 200 and empty data; an unknown customer 404.
// Options.CreditTimes writes createdAt as the real service has been seen to
// (offset +0700, seconds, no zone); Options.CreditIgnoresSortOrder lists oldest
// first whatever sortOrder asks.
//
// Webhook history: ascending createdAt with unique milliseconds; startingAfter
// is an exclusive epoch-ms cursor; limit default 10, max 50; nextStartingAfter
// is the last returned record's createdAt as a string, null at the end.
//
// Credit-usage products are products of type saas or membership whose subType
// is credit_usage; add-credit and immutable checkout with creditAmount require
// one. A customer's balance per product is sum(credit) - sum(debit) >= 0.
//
// # Credit: where each ledger entry comes from
//
// The spec names five entry types (TOPUP, MERCHANT_TOPUP, TRIAL_TOPUP,
// EXPIRE_VOID, CREDIT_USAGE) and three credit operations (endpoints 15-17), and
// says nothing of which causes which. The seeded history is drawn at random
// (ledgerMove); from the first Advance on (credit.go) each entry has the cause
// this reading gives it, and a cause that passes through this API leaves its
// trace there:
//
//   - TOPUP: credit the customer bought. Endpoint 15 exists to sell credit
//     (creditAmount "only for credit-usage products"), so a customer who runs
//     out opens a checkout of the product (70%): an unpaid transaction naming
//     the customer and the product (paymentLinkId), paid within six hours (80%;
//     else it lapses after a day), and then the TOPUP and a payment.received
//     webhook naming both, at the same instant.
//   - MERCHANT_TOPUP: endpoint 16 (add-credit) adds it; the merchant's dashboard
//     may too, with no trace here, rarely (0.2 a day at scale 1).
//   - TRIAL_TOPUP: a customer's first use of a credit-usage product: one new
//     customer in ten within a day of appearing, and existing customers without
//     credit at 0.5 a day at scale 1 (no trace). It is always a first entry.
//   - EXPIRE_VOID: an entry with expiredAt (every credit but MERCHANT_TOPUP,
//     365 days after it) voids, at exactly that time, what is left of it:
//     credit is spent oldest first, so that is the credit up to and including
//     it less everything debited, if positive.
//   - CREDIT_USAGE: the merchant's product spends credit outside this API (no
//     trace), each customer at its own pace: uses come at random with a mean
//     gap that, for a customer holding a seeded ledger, is the mean gap of that
//     history (people keep their habits), and for a new holder is drawn
//     log-uniform between 12 hours and 90 days from the seed and its id (about
//     one in eight uses credit more than daily, half less than weekly). A use
//     spends 0.5-1.5 times the customer's usual amount (log-uniform 1,000-50,000
//     credits) on the product it last moved, never more than is left.
//
// The credit model draws from its own random stream, so the rest of what Advance
// does (customers, invoices, payments, reviews, deliveries) does not depend on it.
//
// Clock: the simulated clock moves only by Advance, and by one millisecond on
// each accepted write so that records created by writes are strictly ordered.
// The Date response header carries the simulated time.
//
// Record URLs (linkUrl, linkPayment, paymentUrl, image urls) point at a fixed
// storefront (StorefrontURL) so lists and Dump agree byte for byte; URLs handed
// back by writes (invoice link, payment edit link, checkout links) are built
// from the request's Host.
//
// Faults (faults.go, misbehave.go) make requests fail (429, 5xx, resets, cut
// bodies, slowness, writes applied then unanswered) or the service misbehave
// (endless or repeating lists, inflated page counts, conflicting duplicates,
// looping cursors, endless credit histories, implausible times, redirects, an
// error page echoing the key).
//
// Admin paths under /__sandbox/ exist only with Options.Admin and need no key:
// POST advance?hours=N|minutes=N, GET now, GET requests, PUT faults (JSON
// Faults), PUT list-order?order=newest|updated|shuffle, GET list-order,
// GET checkout/verify?url=...
package sandbox
