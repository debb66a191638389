package jobs

import (
	"fmt"
	"strings"
)

// registry lists every kind, in documentation order (the order of Kinds and of the messages naming them):
// the one place a kind is registered.
var registry = []kind{register[emailFixArgs](emailFix{}), register[topupArgs](creditTopup{}),
	register[invoiceArgs](invoiceCreate{}), register[paymentEditArgs](paymentEdit{}),
	register[licenseArgs](license{LicenseActivate}), register[licenseArgs](license{LicenseDeactivate}),
	register[checkoutArgs](checkoutLink{}), register[couponArgs](couponCheck{})}

// Kinds lists every kind in documentation order.
func Kinds() []Kind {
	out := make([]Kind, len(registry))
	for i, k := range registry {
		out[i] = k.name()
	}
	return out
}

func kindOf(k Kind) (kind, error) {
	for _, s := range registry {
		if s.name() == k {
			return s, nil
		}
	}
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = string(s.name())
	}
	return nil, fmt.Errorf("unknown job kind %q: want one of %s", k, strings.Join(names, ", "))
}

// fieldUnit is what a number field of kind k's requests, warehouse values or results counts (traits.units).
func fieldUnit(k Kind, field string) unit {
	s, err := kindOf(k)
	if err != nil {
		return unitNone
	}
	return s.traits().units[field]
}
