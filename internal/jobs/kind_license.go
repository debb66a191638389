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

func (l license) name() Kind { return l.kind }

// status and call are what the kind sets and the endpoint that sets it.
func (l license) status() (string, func(*api.Client, context.Context, string, string) (*api.Ack, error)) {
	if l.kind == LicenseDeactivate {
		return "INACTIVE", (*api.Client).DeactivateLicense
	}
	return "ACTIVE", (*api.Client).ActivateLicense
}

func (license) traits() traits {
	return traits{
		columns: []column{
			{"licenseCode", true, "the license code"},
			{"productId", true, "the license's product, of type saas"},
		},
		results: []string{"message"},
		measure: measure{group: "productName"},
	}
}

func (license) parse(r *rowReader, _ *PlanOptions) request {
	return request{"licenseCode": r.text("licenseCode"), "productId": r.text("productId")}
}

func (license) keys(q request, k *keys) { k.productIDs = append(k.productIDs, q["productId"]) }

func (l license) check(q request, w *world, r *rowReader) (string, string, map[string]string) {
	status, _ := l.status()
	p, ok := w.products[q["productId"]]
	if !ok {
		r.fail("productId", "no product %q in the warehouse (synced %s)", q["productId"], stamp(w.syncedAt))
		return "", "", nil
	}
	if p.typ != "saas" {
		r.fail("productId", "product %s (%s) is of type %s: licenses belong to saas products", p.id, p.name, p.typ)
	}
	return r.lang.f("target.license", q["licenseCode"], p.name), r.lang.f("change.status", status),
		map[string]string{"productName": p.name}
}

func (license) dupKeys(q request) []dupKey {
	return []dupKey{{"licenseCode", "license " + q["licenseCode"] + " of product " + q["productId"]}}
}

// repeatKey: the kind (activate or deactivate) is compared too: only plans of the same kind are.
func (license) repeatKey(q request) string { return q["licenseCode"] + "|" + q["productId"] }

func (l license) send(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
	_, call := l.status()
	ack, err := call(c, ctx, q["licenseCode"], q["productId"])
	if err != nil {
		return nil, err
	}
	return map[string]string{"message": ack.Message}, nil
}

func (license) reconcile(*reconciler, context.Context, *Action) (verdict, map[string]string, error) {
	return resendSafe("no read endpoint for licenses; sending again is safe: it sets an absolute status")
}

// traces: none. The spec has no read endpoint for licenses, so the warehouse holds no license state to
// compare with; only billsync's journal shows an earlier activation (or deactivation).
func (license) traces() traceRule {
	return traceRule{none: "the service has no read endpoint for licenses: no synced record shows their state"}
}
