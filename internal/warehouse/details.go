package warehouse

import (
	"context"
	"fmt"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/sqlfile"
)

var detailTargetsSQL = sqlfile.MustLoad(sqlFS, "queries/detail_targets.sql", "products", "payment_requests")

// detailTargets lists up to limit ids of records of account that were listed but never read
// through their detail endpoint. e is ProductDetails or PaymentRequestDetails.
func (b *Build) detailTargets(ctx context.Context, account string, e entity.Name, limit int) ([]string, error) {
	var q string
	switch e {
	case entity.ProductDetails:
		q = detailTargetsSQL.Get("products")
	case entity.PaymentRequestDetails:
		q = detailTargetsSQL.Get("payment_requests")
	default:
		return nil, fmt.Errorf("detail targets: %s has no detail endpoint", e)
	}
	if limit <= 0 {
		return nil, nil
	}
	rows, err := b.db.QueryContext(ctx, q, account, limit)
	if err != nil {
		return nil, fmt.Errorf("detail targets of %s %s: %w", account, e, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("detail targets of %s %s: %w", account, e, err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
