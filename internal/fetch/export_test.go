package fetch

import (
	"time"

	"github.com/billsync/billsync/internal/warehouse"
)

// SetListBatch makes lists merge every n records, so small tests exercise batched merges.
func SetListBatch(n int) (restore func()) {
	old := testBuildOptions
	testBuildOptions = func(o *warehouse.BuildOptions) {
		if old != nil {
			old(o)
		}
		o.ListBatch = n
	}
	return func() { testBuildOptions = old }
}

// SetFanoutBatch makes fan-out batches close after n requests or after age, so small tests
// exercise several queued fan-out merges.
func SetFanoutBatch(n int, age time.Duration) (restore func()) {
	oldN, oldAge := fanoutBatch, fanoutBatchAge
	fanoutBatch, fanoutBatchAge = n, age
	return func() { fanoutBatch, fanoutBatchAge = oldN, oldAge }
}
