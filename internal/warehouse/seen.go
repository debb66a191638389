package warehouse

import (
	"context"
	"fmt"
)

// SeenInRun counts the rows of account that the merges of run runID have seen in e's table. A
// list merged in several batches uses it to check, before marking deletions, that it received
// as many distinct records as the server counts.
func (b *Build) SeenInRun(ctx context.Context, e Entity, account string, runID int64) (int64, error) {
	def, ok := entityDefs[e]
	if !ok || def.detail {
		return 0, fmt.Errorf("seen in run: %q is not a listed entity", e)
	}
	var n int64
	if err := b.db.QueryRowContext(ctx, def.sql["seen_in_run"], account, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("seen in run %d of %s %s: %w", runID, account, e, err)
	}
	return n, nil
}
