package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// world is what planning knows from the published warehouse about the records an input refers to.
type world struct {
	customersByEmail map[string][]customer // lower-cased e-mail
	customersByID    map[string]customer
	products         map[string]product
	payReqs          map[string]payReq
	links            map[string]payLink
	balances         map[[2]string]string // customer, product -> balance text
	syncedAt         time.Time            // last sync of the account; zero when unknown
}

type customer struct{ id, email, name, mobile string }

type product struct{ id, name, typ, subType, status string }

func (p product) creditUsage() bool { return p.subType == "credit_usage" }

type payReq struct{ id, name, amount, description, status, redirect string }

type payLink struct{ id, what, name, amount string }

// keys are the identifiers an input refers to, gathered before one look-up per table.
type keys struct {
	emails, customerIDs, productIDs, payReqIDs, linkIDs []string
	balances                                            bool
}

func loadWorld(ctx context.Context, wh *sql.DB, account string, k *keys) (*world, error) {
	w := &world{customersByEmail: map[string][]customer{}, customersByID: map[string]customer{},
		products: map[string]product{}, payReqs: map[string]payReq{}, links: map[string]payLink{},
		balances: map[[2]string]string{}}
	var synced sql.NullTime
	if err := wh.QueryRowContext(ctx, warehouseSQL.Get("last_sync"), account).Scan(&synced); err != nil {
		return nil, fmt.Errorf("warehouse: last sync: %w", err)
	}
	if !synced.Valid {
		return nil, fmt.Errorf("warehouse has no finished sync of account %q: run a sync first (or set BILLSYNC_ACCOUNT)", account)
	}
	w.syncedAt = synced.Time
	type lookup struct {
		name string
		ids  []string
		scan func(*sql.Rows) error
	}
	ls := []lookup{
		{"customers_by_email", k.emails, func(r *sql.Rows) error {
			var c customer
			err := r.Scan(&c.id, &c.email, &c.name, &c.mobile)
			key := strings.ToLower(c.email)
			w.customersByEmail[key] = append(w.customersByEmail[key], c)
			return err
		}},
		{"customers_by_id", k.customerIDs, func(r *sql.Rows) error {
			var c customer
			err := r.Scan(&c.id, &c.email, &c.name, &c.mobile)
			w.customersByID[c.id] = c
			return err
		}},
		{"products_by_id", k.productIDs, func(r *sql.Rows) error {
			var p product
			err := r.Scan(&p.id, &p.name, &p.typ, &p.subType, &p.status)
			w.products[p.id] = p
			return err
		}},
		{"payment_requests_by_id", k.payReqIDs, func(r *sql.Rows) error {
			var p payReq
			err := r.Scan(&p.id, &p.name, &p.amount, &p.description, &p.status, &p.redirect)
			w.payReqs[p.id] = p
			return err
		}},
		{"payment_links_by_id", k.linkIDs, func(r *sql.Rows) error {
			var l payLink
			err := r.Scan(&l.id, &l.what, &l.name, &l.amount)
			if _, dup := w.links[l.id]; !dup {
				w.links[l.id] = l
			}
			return err
		}},
	}
	for _, l := range ls {
		if len(l.ids) == 0 {
			continue
		}
		if err := queryEach(ctx, wh, warehouseSQL.Get(l.name), l.scan, account, jsonList(l.ids)); err != nil {
			return nil, fmt.Errorf("warehouse: %s: %w", l.name, err)
		}
	}
	if k.balances {
		err := queryEach(ctx, wh, warehouseSQL.Get("balances"), func(r *sql.Rows) error {
			var c, p, b string
			err := r.Scan(&c, &p, &b)
			w.balances[[2]string{c, p}] = b
			return err
		}, account, jsonList(k.customerIDs), jsonList(k.emails))
		if err != nil {
			return nil, fmt.Errorf("warehouse: balances: %w", err)
		}
	}
	return w, nil
}

// CreditProduct is a product a credit top-up or a checkout with credit can name.
type CreditProduct struct {
	ID, Name, Type, Status string
	Customers              int64 // customers with credit history for it
}

// CreditProducts lists the account's credit-usage products in the warehouse, active ones first.
func CreditProducts(ctx context.Context, wh *sql.DB, account string) ([]CreditProduct, error) {
	var out []CreditProduct
	err := queryEach(ctx, wh, warehouseSQL.Get("credit_products"), func(r *sql.Rows) error {
		var p CreditProduct
		err := r.Scan(&p.ID, &p.Name, &p.Type, &p.Status, &p.Customers)
		out = append(out, p)
		return err
	}, account)
	if err != nil {
		return nil, fmt.Errorf("warehouse: credit-usage products: %w", err)
	}
	return out, nil
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// cleanNumber turns a DECIMAL's text ("1500.0000") into "1500"; "" becomes "0".
func cleanNumber(s string) string {
	if s == "" {
		return "0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
