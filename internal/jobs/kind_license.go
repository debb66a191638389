package jobs

import (
	"context"

	"github.com/billsync/billsync/internal/api"
)

// The license kinds set a license's status: POST /saas/v1/license/activate and /deactivate.
const (
	LicenseActivate   Kind = "license-activate"
	LicenseDeactivate Kind = "license-deactivate"
)

// license is both license kinds: the same file and checks, a different status and endpoint.
type license struct{ kind Kind }

// licenseArgs is a row of a license file.
type licenseArgs struct {
	Code      string `json:"licenseCode"`
	ProductID string `json:"productId"`
}

// status and call are what the kind sets and the endpoint that sets it.
func (l license) status() (string, func(*api.Client, context.Context, string, string) (*api.Ack, error)) {
	if l.kind == LicenseDeactivate {
		return "INACTIVE", (*api.Client).DeactivateLicense
	}
	return "ACTIVE", (*api.Client).ActivateLicense
}

// spec: no reconciliation reads and no trace. The spec has no read endpoint for licenses, so the warehouse
// holds no license state to compare with; only billsync's journal shows an earlier activation (or
// deactivation).
func (l license) spec() spec[licenseArgs] {
	return spec[licenseArgs]{name: l.kind, traits: traits{
		columns: []column{
			{"licenseCode", true, "the license code"},
			{"productId", true, "the license's product, of type saas"},
		},
		results: []string{"message"},
		group:   "productName",
	},
		reconcile: resendSafe[licenseArgs]("no read endpoint for licenses; sending again is safe: it sets an absolute status"),
		traces:    traceOf[licenseArgs]{none: "the service has no read endpoint for licenses: no synced record shows their state"},
	}
}

func (license) parse(r *rowReader) (licenseArgs, bool) {
	return licenseArgs{Code: r.text("licenseCode"), ProductID: r.text("productId")}, true
}

func (a licenseArgs) refs(k *keys) { k.productIDs = append(k.productIDs, a.ProductID) }

func (l license) check(a licenseArgs, w *world, r *rowReader) (licenseArgs, described) {
	status, _ := l.status()
	p, ok := w.products[a.ProductID]
	if !ok {
		r.fail("productId", "no product %q in the warehouse (synced %s)", a.ProductID, stamp(w.syncedAt))
		return a, described{}
	}
	if p.typ != "saas" {
		r.fail("productId", "product %s (%s) is of type %s: licenses belong to saas products", p.id, p.name, p.typ)
	}
	return a, described{r.lang.f("target.license", a.Code, p.name), r.lang.f("change.status", status),
		map[string]string{"productName": p.name}}
}

func (a licenseArgs) unique() []dupKey {
	return []dupKey{{"licenseCode", "license " + a.Code + " of product " + a.ProductID}}
}

// repeatKey: the kind (activate or deactivate) is compared too: only plans of the same kind are.
func (a licenseArgs) repeatKey() string { return a.Code + "|" + a.ProductID }

func (l license) send(ctx context.Context, c *api.Client, a licenseArgs) (map[string]string, error) {
	_, call := l.status()
	ack, err := call(c, ctx, a.Code, a.ProductID)
	if err != nil {
		return nil, err
	}
	return map[string]string{"message": ack.Message}, nil
}
