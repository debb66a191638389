package fetch

// SetListBatch makes streams merge every n records, so small tests exercise batched merges.
func SetListBatch(n int) (restore func()) {
	old := listBatch
	listBatch = n
	return func() { listBatch = old }
}
