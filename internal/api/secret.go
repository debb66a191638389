package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// minFragment is the shortest run of the key's characters that is redacted on its own: a message
// cut in the middle of an echoed key would otherwise print most of it.
const minFragment = 6

// redactSecret removes key from s, and every run of at least minFragment characters that also
// occurs in key (the start or end of a key cut by a snippet, a half-echoed key). Keys shorter than
// twice minFragment are only removed whole: their fragments are too common to tell from text.
func redactSecret(s, key string) string {
	if key == "" {
		return s
	}
	s = strings.ReplaceAll(s, key, "[redacted]")
	if len(key) < 2*minFragment || len(s) < minFragment {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if n := longestKeyRun(s[i:], key); n >= minFragment {
			b.WriteString("[redacted]")
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// longestKeyRun is the length of the longest prefix of s that occurs somewhere in key.
func longestKeyRun(s, key string) int {
	best := 0
	for j := 0; j < len(key); j++ {
		n := 0
		for n < len(s) && j+n < len(key) && s[n] == key[j+n] {
			n++
		}
		best = max(best, n)
	}
	return best
}

// RedirectError is a redirect the client refused to follow: the key goes to the configured
// origin only, and a write is never sent again.
type RedirectError struct {
	Status int
	From   string // configured origin
	To     string // the Location, redacted
	Reason string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("HTTP %d redirect to %s refused: %s (the API key is only sent to %s)", e.Status, e.To, e.Reason, e.From)
}

// checkRedirect follows a redirect only for a GET, to the same scheme, host and port as the
// configured base URL; anything else stops at the redirect answer, which the client turns into a
// RedirectError. net/http keeps the Authorization header when only the port differs, and a 307/308
// would send a POST's body again.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.redirectRefusal(via[0].Method, req.URL, len(via)) != "" {
		return http.ErrUseLastResponse
	}
	return nil
}

// redirectRefusal says why a redirect to target is not followed, "" when it may be.
func (c *Client) redirectRefusal(method string, target *url.URL, hops int) string {
	base, err := url.Parse(c.base)
	switch {
	case err != nil || target == nil:
		return "no usable Location"
	case method != http.MethodGet:
		return "a " + method + " is never sent again"
	case hops > 5:
		return "more than 5 redirects"
	case target.Scheme != base.Scheme:
		return "scheme " + target.Scheme + " differs from the configured " + base.Scheme
	case !strings.EqualFold(hostPort(target), hostPort(base)):
		return "another host or port"
	}
	return ""
}

// redirected turns a redirect answer the client stopped at into a RedirectError.
func (c *Client) redirected(resp *http.Response, method string) *RedirectError {
	e := &RedirectError{Status: resp.StatusCode, From: c.origin(), To: "(no Location)"}
	loc, err := resp.Location()
	if err == nil {
		e.To = c.redact(loc.Redacted())
	}
	if e.Reason = c.redirectRefusal(method, loc, 0); e.Reason == "" {
		e.Reason = "more than 5 redirects"
	}
	return e
}
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Hostname() + ":" + port
}

// origin is the configured scheme and host, for messages.
func (c *Client) origin() string {
	u, err := url.Parse(c.base)
	if err != nil {
		return "(unparseable)"
	}
	return u.Scheme + "://" + u.Host
}
