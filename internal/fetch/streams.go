package fetch

import "github.com/billsync/billsync/internal/entity"

// Stream is one stream a sync runs and the entity it writes. A detail stream fills in rows its
// list wrote; every other one mirrors a collection of the service.
type Stream struct {
	Name   string
	Entity entity.Name
	Detail bool
}

// Streams are every stream a sync runs, in order: the lists, the webhook history, the credit
// histories and the details. The warehouse must know each entity (internal/syncrun's tests).
func Streams() []Stream {
	var out []Stream
	for _, l := range lists {
		out = append(out, Stream{Name: l.stream, Entity: l.entity()})
	}
	out = append(out, Stream{Name: webhookStream, Entity: entity.WebhookDeliveries}, Stream{Name: creditStream, Entity: entity.CreditLedger})
	for _, d := range details {
		out = append(out, Stream{Name: d.stream, Entity: d.entity, Detail: true})
	}
	return out
}
