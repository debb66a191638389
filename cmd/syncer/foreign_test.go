package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
)

// TestBaseURLOfAnotherServer: a base URL that names another web server (a typo, a proxy's page,
// another API) ends the run saying so and naming the setting to fix, not only the endpoint's 404.
func TestBaseURLOfAnotherServer(t *testing.T) {
	// A login page answers 200 and is retried with the default backoff, about 26 s of waiting:
	// in parallel it waits beside the package's other long tests instead of after them.
	t.Parallel()
	tests := []struct {
		name  string
		serve http.HandlerFunc
		want  string
	}{
		{"a web server's 404 page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(404)
			w.Write([]byte("<!DOCTYPE HTML PUBLIC><html><title>404 Not Found</title></html>"))
		}, "the answer is an HTML page"},
		{"another API", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"no route","path":"` + r.URL.Path + `"}`))
		}, "the answer is a JSON answer without the service's statusCode"},
		{"a login page with 200", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><form>sign in</form></html>"))
		}, "the answer is an HTML page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.serve)
			defer srv.Close()
			env := envconfig.MapLookuper(map[string]string{
				"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret,
				"BILLSYNC_DB": filepath.Join(t.TempDir(), "w.duckdb"), "BILLSYNC_RATE_PER_MIN": "0",
			})
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"-once"}, env, &stdout, &stderr)
			if err == nil {
				t.Fatal("synced from another server")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "check BILLSYNC_BASE_URL (-base-url)") {
				t.Errorf("exit message %q: want %q and the setting to check", msg, tt.want)
			}
			if strings.Contains(msg+stdout.String()+stderr.String(), secret) {
				t.Fatal("the API key appears in the output")
			}
		})
	}
}
