package warehouse

import "testing"

func TestSmoke(t *testing.T) {
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	for _, c := range []struct {
		e Entity
		f string
	}{
		{Customers, "Customers__customer-list-response.json"},
		{Products, "Products__product-list-response.json"},
		{Products, "Products__product-detail-response.json"},
		{ProductDetails, "Products__product-detail-response.json"},
		{PaymentRequests, "PaymentRequests__payment-request-list-response.json"},
		{PaymentRequestDetails, "PaymentRequests__payment-request-detail-response.json"},
		{Invoices, "Invoices__invoice-list-response.json"},
		{UnpaidTransactions, "Transactions__unpaid-list-response.json"},
		{Reviews, "Reviews__review-list-response.json"},
		{CreditLedger, "CreditMembership__credit-paginate-history-response.json"},
		{WebhookDeliveries, "Webhooks__webhook-history-list-response.json"},
	} {
		res := load(t, b, c.e, run, t0, true, fixtureItems(t, c.f)...)
		t.Logf("%s %+v", c.e, res)
	}
}
