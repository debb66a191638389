package report

import (
	"context"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	w := testWorld(t)
	out := t.TempDir()
	files, err := Generate(context.Background(), Options{DB: w.db, OutDir: out, AsOf: time.Date(2026, 6, 5, 0, 0, 0, 0, time.UTC), Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Log(f)
	}
}
