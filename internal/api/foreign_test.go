package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestNotTheService: answers no reading of the spec allows (another web server's pages, another
// API's JSON) are told apart from the service's own refusals, so the person is pointed at the base
// URL instead of at an endpoint; the service's errors, however worded, are not.
func TestNotTheService(t *testing.T) {
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		want   string // NotTheService; "" = may be the service
	}{
		{"nginx 404 page", 404, "text/html", "<!DOCTYPE HTML><html><body>404 Not Found</body></html>", "an HTML page"},
		{"HTML without a content type", 404, "", "  <html>gone</html>", "an HTML page"},
		{"HTML page with 200", 200, "text/html; charset=utf-8", "<!doctype html><title>Welcome</title>", "an HTML page"},
		{"JSON-typed HTML with 200", 200, "application/json", "<html>proxy login</html>", "an HTML page"},
		{"plain text 404", 404, "text/plain", "404 page not found", "a body that is not JSON"},
		{"plain text 200", 200, "text/plain", "OK", "a body that is not JSON"},
		{"another API's JSON 404", 404, "application/json", `{"error":"Not Found","path":"/hl/v1/payment"}`, "a JSON answer without the service's statusCode"},
		{"the service's 404", 404, "application/json", `{"statusCode":404,"messages":"Data tidak ditemukan"}`, ""},
		{"the service's 500", 500, "application/json", `{"statusCode":500,"messages":"Terjadi kesalahan"}`, ""},
		{"an empty 404", 404, "", "", ""},
		{"the service's 400 in a 200", 200, "application/json", `{"statusCode":400,"messages":"limit tidak valid"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			c := newClient(t, fastConfig(s.URL))
			_, err := c.List(context.Background(), "/hl/v1/payment", url.Values{"page": {"1"}})
			if err == nil {
				t.Fatal("no error")
			}
			if got := NotTheService(err); got != tt.want {
				t.Errorf("NotTheService = %q, want %q (err: %v)", got, tt.want, err)
			}
			if !strings.Contains(err.Error(), "GET /hl/v1/payment page 1") {
				t.Errorf("the error does not name the call: %v", err)
			}
		})
	}
}
