// Package entity declares the kinds of record billsync syncs: for each, its name, table, paths,
// paging, key, merge rule and fields. It is a leaf: no DuckDB, no HTTP. The warehouse derives its
// DDL, projection and change SQL, the docs table and the export from it; fetch derives its list
// streams from it.
package entity

// Name names a kind of record the fetcher stages and the warehouse merges; a list's stream and
// its table carry the same name.
type Name string

// The names Go code refers to.
const (
	Customers             Name = "customers"
	Products              Name = "products"        // one list across all product-type streams
	ProductDetails        Name = "product_details" // fills user_id, qty, variants of listed products
	PaymentRequests       Name = "payment_requests"
	PaymentRequestDetails Name = "payment_request_details"
	Invoices              Name = "invoices"
	UnpaidTransactions    Name = "unpaid_transactions"
	Reviews               Name = "reviews"
	CreditLedger          Name = "credit_ledger"      // incremental: never marks deletions
	WebhookDeliveries     Name = "webhook_deliveries" // incremental: never marks deletions
)
