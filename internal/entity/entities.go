package entity

// all are the entities billsync syncs. A new paged list is one more entry (its table is created
// from the entry when no migration does, its SQL generated), its merge golden and its row of
// docs/warehouse.md's generated table.
var all = []*Decl{
	{
		Name: Customers, Paging: Pages, Rule: FullRefresh, Paths: []string{"/hl/v1/customer"},
		PathID: true, // the credit history is read per customer id
		Fields: []Field{
			{Col: "email", Type: Text, JSON: []string{"email"}},
			{Col: "mobile", Type: Text, JSON: []string{"mobile"}},
			{Col: "name", Type: Text, JSON: []string{"name"}},
			{Col: "status", Type: Text, JSON: []string{"status"}, Doc: "`active`/`inactive`"},
			{Col: "created_at", Type: Time, JSON: []string{"createdAt"}},
			// the spec's field description calls it updateAt; either name is accepted
			{Col: "updated_at", Type: Time, JSON: []string{"updatedAt", "updateAt"}},
			{Col: "user_id", Type: Text, JSON: []string{"userId"}, Doc: "owning merchant user"},
		},
		Changes: []string{"status", "name", "email", "mobile"},
		Row:     "customer", Fixture: "Customers__customer-list-response.json",
		Label:   Label{"Pelanggan", "Customers"},
		Deleted: "coalesce(x.name, '') || ' <' || coalesce(x.email, '') || '>'",
	},
	{
		Name: Products, Paging: Pages, Rule: FullRefresh, Paths: productTypePaths(),
		PathID: true, // details are read per product id
		Fields: []Field{
			{Col: "name", Type: Text, JSON: []string{"name"}},
			{Col: "type", Type: Text, JSON: []string{"type"}},
			{Col: "sub_type", Type: Text, JSON: []string{"subType"}, Doc: "`credit_usage` marks credit products"},
			{Col: "status", Type: Text, JSON: []string{"status"}, Doc: "`active`/`inactive`/`deleted`"},
			{Col: "amount", Type: Int, JSON: []string{"amount"}, Doc: "price"},
			{Col: "category", Type: Text, JSON: []string{"category"}},
			{Col: "description", Type: Text, JSON: []string{"description"}, Doc: "HTML"},
			{Col: "link", Type: Text, JSON: []string{"link"}, Doc: "slug"},
			{Col: "purchase_limit", Type: Int, JSON: []string{"limit"}, Doc: "API `limit`"},
			{Col: "redirect_url", Type: Text, JSON: []string{"redirectUrl"}},
			{Col: "installment_id", Type: Text, JSON: []string{"installmentId"}},
			{Col: "created_at", Type: Time, JSON: []string{"createdAt"}},
			{Col: "link_url", Type: Text, JSON: []string{"linkUrl"}},
			{Col: "link_payment", Type: Text, JSON: []string{"linkPayment"}},
			{Col: "membership_tier", Type: JSON, JSON: []string{"membershipTier"}},
			{Col: "event", Type: JSON, JSON: []string{"event"}},
			{Col: "order", Type: JSON, JSON: []string{"order"}},
			{Col: "cover_image", Type: JSON, JSON: []string{"coverImage"}},
			{Col: "multiple_image", Type: JSON, JSON: []string{"multipleImage"}},
		},
		Changes: []string{"status", "amount", "name"},
		Derived: []Child{productVariants},
		SQL:     []string{"project"}, // variants come as an array or as a JSON-encoded string
		Row:     "product (all 19 product types)", Fixture: "Products__product-list-response.json",
		Label: Label{"Produk", "Products"},
	},
	{
		Name: ProductDetails, Table: "products", Paging: Detail, Rule: FillDetail, Paths: []string{"/hl/v1/product/{id}"},
		Fields: []Field{
			{Col: "user_id", Type: Text, JSON: []string{"userId"}},
			{Col: "qty", Type: Int, JSON: []string{"qty"}},
			{Col: "detail_fetched_at", Type: Time},
		},
		Doc:     "from the product detail call",
		Label:   Label{"Rincian produk", "Product details"},
		Derived: []Child{productVariants},
		SQL:     []string{"project", "classify", "counts", "lifecycle", "changes", "upsert"},
		Fixture: "Products__product-detail-response.json",
	},
	{
		Name: PaymentRequests, Paging: Pages, Rule: FullRefresh, Paths: []string{"/hl/v1/payment"},
		PathID: true, // details are read per payment request id
		Fields: []Field{
			{Col: "amount", Type: Int, JSON: []string{"amount"}},
			{Col: "category", Type: Text, JSON: []string{"category"}},
			{Col: "created_at", Type: Time, JSON: []string{"createdAt"}},
			{Col: "description", Type: Text, JSON: []string{"description"}},
			{Col: "link", Type: Text, JSON: []string{"link"}},
			{Col: "type", Type: Text, JSON: []string{"type"}},
			{Col: "status", Type: Text, JSON: []string{"status"}, Doc: "`unpaid`/`active`/`paid`/`closed`"},
			{Col: "name", Type: Text, JSON: []string{"name"}},
			{Col: "purchase_limit", Type: Int, JSON: []string{"limit"}, Doc: "API `limit`"},
			{Col: "redirect_url", Type: Text, JSON: []string{"redirectUrl"}},
			{Col: "installment_id", Type: Text, JSON: []string{"installmentId"}},
			{Col: "expired_at", Type: Time, JSON: []string{"expiredAt"}, Future: true, Doc: "when the API sends one"},
		},
		Changes: []string{"status", "amount", "name"},
		Row:     "single payment request", Fixture: "PaymentRequests__payment-request-list-response.json",
		Label: Label{"Permintaan pembayaran", "Payment requests"},
	},
	{
		Name: PaymentRequestDetails, Table: "payment_requests", Paging: Detail, Rule: FillDetail, Paths: []string{"/hl/v1/payment/{id}"},
		Fields: []Field{
			{Col: "user_id", Type: Text, JSON: []string{"userId"}},
			{Col: "qty", Type: Int, JSON: []string{"qty"}},
			{Col: "detail_fetched_at", Type: Time},
		},
		Doc:     "from the detail call",
		Label:   Label{"Rincian permintaan pembayaran", "Payment request details"},
		SQL:     []string{"project", "classify", "counts", "lifecycle", "changes", "upsert"},
		Fixture: "PaymentRequests__payment-request-detail-response.json",
	},
	{
		Name: Invoices, Paging: Pages, Rule: FullRefresh, Paths: []string{"/hl/v1/invoice"},
		Fields: []Field{
			{Col: "amount", Type: Int, JSON: []string{"amount"}},
			{Col: "category", Type: Text, JSON: []string{"category"}},
			{Col: "created_at", Type: Time, JSON: []string{"createdAt"}},
			{Col: "description", Type: Text, JSON: []string{"description"}},
			{Col: "link", Type: Text, JSON: []string{"link"}},
			{Col: "type", Type: Text, JSON: []string{"type"}},
			{Col: "status", Type: Text, JSON: []string{"status"}, Doc: "`active`/`paid`/`closed`"},
			{Col: "name", Type: Text, JSON: []string{"name"}},
			{Col: "redirect_url", Type: Text, JSON: []string{"redirectUrl"}},
			{Col: "customer_id", Type: Text, JSON: []string{"customerId", "customer.id"}},
			{Col: "customer_email", Type: Text, JSON: []string{"customer.email"}},
			{Col: "customer_name", Type: Text, JSON: []string{"customer.name"}},
			{Col: "customer_mobile", Type: Text, JSON: []string{"customer.mobile"}},
			{Col: "expired_at", Type: Time, JSON: []string{"expiredAt"}, Future: true},
		},
		Changes: []string{"status", "amount", "name"},
		Derived: []Child{{
			Table: "invoice_transactions", ParentKey: "invoice_id", Array: "transactions",
			Fields:  []Field{{Col: "status", Type: Text, JSON: []string{"status"}, Doc: "`created`/`paid`"}},
			Changes: []string{"status"},
			Row:     "payment attempt of an invoice",
			Label:   Label{"Transaksi invoice", "Invoice transactions"},
			Deleted: "'Invoice ' || x.invoice_id",
		}},
		Row: "invoice", Fixture: "Invoices__invoice-list-response.json",
		Label: Label{"Invoice", "Invoices"},
	},
	{
		Name: UnpaidTransactions, Paging: Pages, Rule: FullRefresh, Paths: []string{"/hl/v1/transactions/unpaid"},
		Fields: []Field{
			{Col: "created_at", Type: Time, JSON: []string{"createdAt"}},
			{Col: "type", Type: Text, JSON: []string{"type"}},
			{Col: "amount", Type: Int, JSON: []string{"amount"}},
			{Col: "status", Type: Text, JSON: []string{"status"}},
			{Col: "payment_link_id", Type: Text, JSON: []string{"paymentLinkId", "paymentLink.id"}, Doc: "the product or request being paid"},
			{Col: "customer_id", Type: Text, JSON: []string{"customerId", "customer.id"}},
			{Col: "customer_email", Type: Text, JSON: []string{"customer.email"}},
			{Col: "customer_name", Type: Text, JSON: []string{"customer.name"}},
			{Col: "customer_mobile", Type: Text, JSON: []string{"customer.mobile"}},
			{Col: "payment_link_name", Type: Text, JSON: []string{"paymentLink.name"}},
			{Col: "payment_url", Type: Text, JSON: []string{"paymentUrl"}},
			{Col: "expired_at", Type: Time, JSON: []string{"expiredAt"}, Future: true},
		},
		Changes: []string{"status", "amount"},
		Row:     "open (unpaid) transaction",
		Doc:     "A row leaving the list was paid or expired: `deleted_upstream_at` says when billsync noticed",
		Fixture: "Transactions__unpaid-list-response.json",
		Label:   Label{"Transaksi belum dibayar", "Unpaid transactions"},
		Deleted: "x.payment_link_name",
	},
	{
		Name: Reviews, Paging: Pages, Rule: FullRefresh, Paths: []string{"/hl/v1/reviews"},
		Fields: []Field{
			{Col: "created_at", Type: Time, JSON: []string{"createdAt"}},
			{Col: "updated_at", Type: Time, JSON: []string{"updatedAt"}},
			{Col: "customer_id", Type: Text, JSON: []string{"customerId", "customer.id"}},
			{Col: "customer_name", Type: Text, JSON: []string{"customer.name"}},
			{Col: "message", Type: Text, JSON: []string{"message"}},
			{Col: "payment_link_id", Type: Text, JSON: []string{"paymentLinkId", "paymentLink.id"}},
			{Col: "product_name", Type: Text, JSON: []string{"paymentLink.name"}},
			{Col: "product_type", Type: Text, JSON: []string{"paymentLink.type"}},
			{Col: "rating", Type: Number, JSON: []string{"rating"}},
			{Col: "status", Type: Text, JSON: []string{"status"}},
			{Col: "user_id", Type: Text, JSON: []string{"userId"}},
		},
		Changes: []string{"status", "rating"},
		Row:     "product review", Fixture: "Reviews__review-list-response.json",
		Label:   Label{"Ulasan", "Reviews"},
		Deleted: "x.product_name || ' (' || x.rating || ' ★)'",
	},
	{
		// each customer's credit history; who is due and why is the warehouse's (credit.go)
		Name: CreditLedger, Paging: FanOut, Rule: Incremental, Parent: Customers,
		Paths: []string{"/credit/v1/credit/customer/paginate-credit-history/{id}"},
		Fields: []Field{
			{Col: "customer_id", Type: Text, JSON: []string{"customerId"}},
			{Col: "product_id", Type: Text, JSON: []string{"productId"}},
			{Col: "merchant_id", Type: Text, JSON: []string{"merchantId"}},
			{Col: "created_at", Type: Time, JSON: []string{"createdAt"}},
			{Col: "expired_at", Type: Time, JSON: []string{"expiredAt"}, Future: true},
			{Col: "credit", Type: Decimal},
			{Col: "debit", Type: Decimal},
			{Col: "status", Type: Text, JSON: []string{"status"}},
			{Col: "wallet_type", Type: Text, JSON: []string{"walletType"}, Doc: "`ADD_ON`, `MEMBERSHIP`, …"},
			{Col: "type", Type: Text, JSON: []string{"type"}, Doc: "`CREDIT_USAGE`, `MERCHANT_TOPUP`, …"},
			{Col: "membership_tier_id", Type: Text, JSON: []string{"membershipTierId"}},
		},
		Changes: []string{"status"},
		SQL:     []string{"project"}, // credit and debit, or one signed amount
		Row:     "credit history entry",
		Doc:     "Never marked deleted (fetched incrementally). Where the API sent one signed `amount`, credit = max(amount, 0) and debit = max(-amount, 0)",
		Fixture: "CreditMembership__credit-paginate-history-response.json",
		Label:   Label{"Mutasi kredit", "Credit ledger"},
	},
	{
		Name: WebhookDeliveries, Paging: Cursor, Rule: Incremental, Paths: []string{"/hl/v2/webhooks/new-history"},
		Fields: []Field{
			{Col: "user_id", Type: Text, JSON: []string{"userId"}},
			{Col: "created_at", Type: Time, JSON: []string{"createdAt"}, Required: true},
			{Col: "updated_at", Type: Time, JSON: []string{"updatedAt"}},
			{Col: "next_delivery", Type: Time, JSON: []string{"nextDelivery"}, Future: true},
			{Col: "event_type", Type: Text, Doc: "decoded from the API's `payload`, a JSON-encoded string; `raw->>'payload'` has it as sent"},
			{Col: "event_data", Type: JSON, Doc: "decoded from `payload` too"},
			{Col: "payment_link_id", Type: Text, JSON: []string{"paymentLinkId"}},
			{Col: "payment_link_transaction_id", Type: Text, JSON: []string{"paymentLinkTransactionId"}},
			{Col: "response_payload", Type: Text, JSON: []string{"responsePayload"}},
			{Col: "source", Type: Text, JSON: []string{"source"}},
			{Col: "status", Type: Text, JSON: []string{"status"}},
			{Col: "type", Type: Text, JSON: []string{"type"}},
			{Col: "webhook_type", Type: Text, JSON: []string{"Webhooktype"}, Doc: "API `Webhooktype`"},
			{Col: "url_destination", Type: Text, JSON: []string{"urlDestination"}},
		},
		Changes: []string{"status", "next_delivery"},
		SQL:     []string{"project"}, // payload is a JSON-encoded string, parsed once
		Row:     "webhook delivery attempt record", Doc: "Never marked deleted",
		Fixture: "Webhooks__webhook-history-list-response.json",
		Label:   Label{"Pengiriman webhook", "Webhook deliveries"},
	},
}

// productVariants are built from a product's variants, by its list record and by its detail.
// The service sends them as the `variants` array or as `variant`, a JSON-encoded string of it:
// the products' and details' hand-written projections give them as x_product_variants.
var productVariants = Child{
	Table: "product_variants", ParentKey: "product_id", Array: "variants",
	Fields: []Field{
		{Col: "name", Type: Text, JSON: []string{"name"}},
		{Col: "description", Type: Text, JSON: []string{"description"}},
		{Col: "amount", Type: Int, JSON: []string{"amount"}},
		{Col: "purchase_limit", Type: Int, JSON: []string{"limit"}},
		{Col: "notes", Type: Text, JSON: []string{"notes"}},
		{Col: "redirect_url", Type: Text, JSON: []string{"redirectUrl"}},
		{Col: "status", Type: Text, JSON: []string{"status"}},
		{Col: "created_at", Type: Time, JSON: []string{"createdAt"}},
	},
	Changes: []string{"status", "amount", "name"},
	Row:     "variant of a product",
	Label:   Label{"Varian produk", "Product variants"},
}

// productTypes are the 19 values of the spec's product-by-type path parameter. Products are
// only listable by type, so the products list is 19 sub-lists feeding one loader.
var productTypes = []string{
	"generic_link", "physical_product", "event", "webinar", "digital_product", "coaching", "course",
	"cohort_based", "fundraising", "ebook", "podcast", "audiobook", "membership", "zakat", "invoice",
	"bundling", "saas", "payment_request", "support",
}

func productTypePaths() []string {
	p := make([]string, len(productTypes))
	for i, t := range productTypes {
		p[i] = "/hl/v1/product/type/" + t
	}
	return p
}
