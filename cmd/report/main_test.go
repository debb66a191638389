package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
)

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(*config) bool
		wantErr string
	}{
		{"defaults", nil, nil, func(c *config) bool {
			return c.DB == "./data/billsync.duckdb" && c.TZ == "Asia/Jakarta" && c.Currency == "IDR" && c.OutDir == "./out"
		}, ""},
		{"env", map[string]string{"BILLSYNC_DB": "/d/w.duckdb", "BILLSYNC_REPORTS_OUT": "/r", "BILLSYNC_JOURNAL": "/d/j.duckdb"}, nil,
			func(c *config) bool { return c.DB == "/d/w.duckdb" && c.OutDir == "/r" && c.Journal == "/d/j.duckdb" }, ""},
		{"flags override env", map[string]string{"BILLSYNC_TZ": "UTC"}, []string{"-tz", "Asia/Makassar", "-var", "bucket_1=15", "aging", "credit"},
			func(c *config) bool {
				return c.TZ == "Asia/Makassar" && c.vars["bucket_1"] == "15" && strings.Join(c.names, ",") == "aging,credit"
			}, ""},
		{"bad date", nil, []string{"-as-of", "31/10/2026"}, nil, "-as-of"},
		{"bad var", nil, []string{"-var", "bucket_1"}, nil, "name=value"},
		{"two modes", nil, []string{"-list", "-sql", "SELECT 1"}, nil, "only one"},
		{"export format", nil, []string{"-export", "orc"}, nil, "parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfig(context.Background(), tc.args, envconfig.MapLookuper(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("config %+v", c)
			}
		})
	}
}
