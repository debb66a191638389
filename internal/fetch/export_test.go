package fetch

import "time"

// SetListBatch makes streams merge every n records, so small tests exercise batched merges.
func SetListBatch(n int) (restore func()) {
	old := listBatch
	listBatch = n
	return func() { listBatch = old }
}

// SetFanoutBatch makes fan-out batches close after n requests or after age, so small tests
// exercise several queued fan-out merges.
func SetFanoutBatch(n int, age time.Duration) (restore func()) {
	oldN, oldAge := fanoutBatch, fanoutBatchAge
	fanoutBatch, fanoutBatchAge = n, age
	return func() { fanoutBatch, fanoutBatchAge = oldN, oldAge }
}
