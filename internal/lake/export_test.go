package lake

import (
	"context"

	"github.com/billsync/billsync/internal/warehouse"
)

// StopBeforeCommit makes f run between writing a table's data files and committing them; an
// error from it ends that commit there, as a killed process would.
func StopBeforeCommit(f func(ctx context.Context, table, account string) error) (restore func()) {
	old := beforeCommit
	beforeCommit = f
	return func() { beforeCommit = old }
}

// DeclareColumn makes the declarations of table gain col, as a newer billsync's would.
func DeclareColumn(table string, col warehouse.Column) (restore func()) {
	old := dataColumns
	dataColumns = func() map[string][]warehouse.Column {
		out := old()
		cols := out[table]
		out[table] = append(cols[:len(cols):len(cols)], col)
		return out
	}
	return func() { dataColumns = old }
}

func DigestOf(ctx context.Context, path, table, account string) (int64, string, error) {
	src, err := openSource(ctx, path)
	if err != nil {
		return 0, "", err
	}
	defer src.Close()
	return src.digest(ctx, table, account)
}

func (l *Lake) LastDigest(ctx context.Context, name, account string) (int64, string) {
	tbl, _ := l.table(ctx, name)
	c := lastCommit(tbl, account)
	return c.rows, c.digest
}

// ColumnsOf are the lake table's columns with their warehouse types.
func ColumnsOf(table string) []warehouse.Column { return lakeColumns(table) }
