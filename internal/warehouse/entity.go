package warehouse

import (
	"fmt"
	"strings"
)

// Entity names a kind of record the fetcher stages; each has a merge .sql file.
type Entity string

const (
	Customers             Entity = "customers"
	Products              Entity = "products"        // one loader across all product-type streams
	ProductDetails        Entity = "product_details" // fills user_id, qty, variants of listed products
	PaymentRequests       Entity = "payment_requests"
	PaymentRequestDetails Entity = "payment_request_details"
	Invoices              Entity = "invoices"
	UnpaidTransactions    Entity = "unpaid_transactions"
	Reviews               Entity = "reviews"
	CreditLedger          Entity = "credit_ledger"      // incremental: never marks deletions
	WebhookDeliveries     Entity = "webhook_deliveries" // incremental: never marks deletions
)

// Entities lists every entity in a stable order.
var Entities = []Entity{Customers, Products, ProductDetails, PaymentRequests, PaymentRequestDetails,
	Invoices, UnpaidTransactions, Reviews, CreditLedger, WebhookDeliveries}

type entityDef struct {
	table   string
	deletes bool     // a full list marks rows it did not contain as deleted upstream
	detail  bool     // fills columns of rows another entity listed; never inserts
	derived []string // child tables built by merge/derived.sql after the upsert
	sql     map[string]string
}

var entityDefs = loadEntityDefs()

func loadEntityDefs() map[Entity]*entityDef {
	defs := map[Entity]*entityDef{
		Customers:             {table: "customers", deletes: true},
		Products:              {table: "products", deletes: true, derived: []string{"product_variants"}},
		ProductDetails:        {table: "products", detail: true, derived: []string{"product_variants"}},
		PaymentRequests:       {table: "payment_requests", deletes: true},
		PaymentRequestDetails: {table: "payment_requests", detail: true},
		Invoices:              {table: "invoices", deletes: true, derived: []string{"invoice_transactions"}},
		UnpaidTransactions:    {table: "unpaid_transactions", deletes: true},
		Reviews:               {table: "reviews", deletes: true},
		CreditLedger:          {table: "credit_ledger"},
		WebhookDeliveries:     {table: "webhook_deliveries"},
	}
	common := mustSections("merge/common.sql")
	derived := mustSections("merge/derived.sql")
	for e, d := range defs {
		d.sql = map[string]string{}
		// constants only: the table and entity names come from the map above
		r := strings.NewReplacer("__TABLE__", d.table, "__ENTITY__", d.table)
		for name, text := range common {
			d.sql[name] = r.Replace(text)
		}
		for name, text := range mustSections("merge/" + string(e) + ".sql") {
			d.sql[name] = text
		}
		for _, name := range d.derived {
			for _, section := range []string{name + "_incoming", name, name + "_first"} {
				text, ok := derived[section]
				if !ok {
					panic(fmt.Sprintf("merge/derived.sql has no section %q", section))
				}
				d.sql["derived_"+section] = text
			}
		}
	}
	return defs
}
