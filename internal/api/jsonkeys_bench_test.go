package api

import "testing"

// invoiceRaw is an invoice as the list sends it: more keys than a customer, nested objects and lists.
var invoiceRaw = []byte(`{"id":"00a2435d-2604-427b-ba42-879084d58bfe","amount":10000,"category":null,"createdAt":1776190826570,"description":"Pelunasan proyek","link":"duo73nqtep7","type":"invoice","status":"closed","name":"INVOICE","redirectUrl":null,"customerId":"c95b3493-41cb-4dc8-af16-abf26acb1d44","expiredAt":1776190826570,"updatedAt":1776190826570,"paymentUrl":"https://x.example/i/duo73nqtep7","transactions":[{"id":"4d54df5b-1089-4395-a729-b313e750ed8f","status":"created"}],"customer":{"id":"c95b3493-41cb-4dc8-af16-abf26acb1d44","email":"siti.gunawan922@gmail.com","mobile":"62820090008584","name":"Siti Gunawan"},"items":[{"quantity":1,"rate":10000,"description":"x"}]}`)

// BenchmarkRepeatedKeyInvoice: the sync scans every record; it must allocate nothing (an invoice's 18
// keys once took a map and 21 allocations per record, and Go's GC doubled in the list phase).
func BenchmarkRepeatedKeyInvoice(b *testing.B) {
	b.ReportAllocs()
	for n := 0; n < b.N; n++ {
		if _, dup := RepeatedKey(invoiceRaw); dup {
			b.Fatal("dup")
		}
	}
	if a := testing.AllocsPerRun(10, func() { RepeatedKey(invoiceRaw) }); a != 0 {
		b.Errorf("%v allocations per invoice, want 0", a)
	}
}
