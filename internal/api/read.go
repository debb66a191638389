package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ListPage is one page of any list endpoint, normalized.
type ListPage struct {
	Items []json.RawMessage // each item's exact bytes as the server sent them (copies, safe to keep)
	// Page, PageCount and PageSize are what the server says it applied, never the request's values;
	// 0 when the answer carries none (PageCount is derived from Total and PageSize when it can be).
	Page, PageCount, PageSize int
	Total                     int64  // total, totalCustomer or the credit total; -1 when the answer carries none
	HasMore                   bool   // hasMore, else derived from page and page count or from the cursor
	NextStartingAfter         string // webhook history cursor; "" when null or absent
	Message                   string // messages or message
	// Doubts are what the envelope said that the spec does not allow, though it could still be
	// read (a boolean in a string, null data, a page count the total contradicts): the page
	// cannot prove its list complete.
	Doubts []string
	// Redactions are the records whose text held the API key, or a run of 8 or more of its
	// characters: Items holds them with the runs replaced by Redacted (records.go).
	Redactions []Redaction
}

// Paths of the endpoints with their own envelope.
const (
	creditHistoryPath  = "/credit/v1/credit/customer/paginate-credit-history/"
	webhookHistoryPath = "/hl/v2/webhooks/new-history"
	maxWebhookLimit    = 50
)

// List fetches one page of a standard paged list (statusCode, messages, hasMore, pageCount, pageSize, page,
// total or totalCustomer, data). path is a spec path such as "/hl/v1/invoice" with any path parameter already
// escaped; query parameters go in q, never in path.
func (c *Client) List(ctx context.Context, path string, q url.Values) (*ListPage, error) {
	return c.list(ctx, path, q, pageOf(q), (*header).standardPage)
}

// CreditHistory fetches one page of a customer's credit history (statusCode, message, total, page, limit,
// totalPages, data). HasMore is page < totalPages.
func (c *Client) CreditHistory(ctx context.Context, customerID string, q url.Values) (*ListPage, error) {
	seg, err := PathSegment(customerID)
	if err != nil {
		return nil, fmt.Errorf("GET %s{customerId}: customer %w", creditHistoryPath, err)
	}
	return c.list(ctx, creditHistoryPath+seg, q, pageOf(q), (*header).creditPage)
}

// WebhookHistory fetches one page of webhook delivery records after the cursor startingAfter ("" for the
// newest page). limit 0 leaves the service's default (10); the service allows at most 50.
func (c *Client) WebhookHistory(ctx context.Context, limit int, startingAfter string) (*ListPage, error) {
	if limit < 0 || limit > maxWebhookLimit {
		return nil, fmt.Errorf("GET %s: limit %d is outside 0..%d", webhookHistoryPath, limit, maxWebhookLimit)
	}
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	page := ""
	if startingAfter != "" {
		q.Set("startingAfter", startingAfter)
		page = "after " + startingAfter
	}
	return c.list(ctx, webhookHistoryPath, q, page, (*header).webhookPage)
}

// Detail fetches a detail endpoint such as "/hl/v1/product/{id}" and returns its data object (a copy).
func (c *Client) Detail(ctx context.Context, path string) (json.RawMessage, error) {
	raw, _, err := c.DetailRedacted(ctx, path)
	return raw, err
}

// DetailRedacted is Detail, and where the object's text held the API key (nil when it did not): the
// object returned has it replaced by Redacted, as a list's records.
func (c *Client) DetailRedacted(ctx context.Context, path string) (json.RawMessage, *Redaction, error) {
	if err := checkPath(path); err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", path, err)
	}
	var out json.RawMessage
	var red *Redaction
	err := c.do(ctx, &call{method: http.MethodGet, path: path, decode: func(status int, body []byte) error {
		e, err := decodeEnvelope(body, status)
		if err != nil {
			return err
		}
		if k := kindOf(e.Data); k != "object" {
			return fmt.Errorf("data: expected object, got %s", k)
		}
		if err := checkUTF8(body, []json.RawMessage{e.Data}, true); err != nil {
			return err
		}
		items := []json.RawMessage{e.Data}
		if r := c.screen.redactItems(body, items); r != nil {
			red = &r[0]
		}
		out = items[0]
		return nil
	}})
	if err != nil {
		return nil, nil, err
	}
	return out, red, nil
}

func (c *Client) list(ctx context.Context, path string, q url.Values, page string, norm func(*header) (*ListPage, error)) (*ListPage, error) {
	if err := checkPath(path); err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	var out *ListPage
	err := c.do(ctx, &call{method: http.MethodGet, path: path, query: q, page: page,
		decode: func(status int, body []byte) (err error) {
			out, err = decodeList(body, status, norm)
			if err != nil {
				return err
			}
			if err := checkUTF8(body, out.Items, false); err != nil {
				return err
			}
			out.Redactions = c.screen.redactItems(body, out.Items)
			return nil
		}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PathSegment escapes id as one segment of a request path. An id no escaping makes one is an
// error, never a request: empty, "." and ".." (servers and proxies resolve dot segments, and
// decode %2E to a dot first), or holding a control character.
func PathSegment(id string) (string, error) {
	switch id {
	case "":
		return "", errors.New("id is empty")
	case ".", "..":
		return "", fmt.Errorf("id %q cannot be a path segment", id)
	}
	for i, r := range id {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return "", fmt.Errorf("id %q cannot be a path segment: control character at byte %d", id, i)
		}
	}
	return url.PathEscape(id), nil
}

func checkPath(path string) error {
	switch {
	case !strings.HasPrefix(path, "/"):
		return errors.New("path must start with /")
	case strings.ContainsAny(path, "?#"):
		return errors.New("path must not carry a query: pass query parameters in q")
	}
	return nil
}

func pageOf(q url.Values) string {
	if p := q.Get("page"); p != "" {
		return "page " + p
	}
	return ""
}

func (e *header) standardPage() (*ListPage, error) {
	var f fields
	p := &ListPage{Message: e.message(), Total: -1}
	page, _ := f.int("page", e.Page)
	size, _ := f.int("pageSize", e.PageSize)
	count, hasCount := f.int("pageCount", e.PageCount)
	if t, ok := f.int("total", e.Total); ok {
		p.Total = t
	} else if t, ok := f.int("totalCustomer", e.TotalCustomer); ok {
		p.Total = t
	}
	more, hasMore := f.bool("hasMore", e.HasMore)
	if f.err != nil {
		return nil, f.err
	}
	p.Doubts = f.doubts
	if hasCount && p.Total >= 0 && size > 0 && count != ceilDiv(p.Total, size) {
		p.Doubts = append(p.Doubts, fmt.Sprintf("pageCount %d disagrees with the total %d at page size %d", count, p.Total, size))
	}
	if !hasCount && p.Total >= 0 && size > 0 {
		count = ceilDiv(p.Total, size)
	}
	if !hasMore {
		more = page > 0 && page < count
	}
	p.Page, p.PageSize, p.PageCount, p.HasMore = int(page), int(size), int(count), more
	return p, nil
}

func (e *header) creditPage() (*ListPage, error) {
	var f fields
	p := &ListPage{Message: e.message(), Total: -1}
	page, _ := f.int("page", e.Page)
	limit, _ := f.int("limit", e.Limit)
	pages, hasPages := f.int("totalPages", e.TotalPages)
	if t, ok := f.int("total", e.Total); ok {
		p.Total = t
	}
	more, _ := f.bool("hasMore", e.HasMore)
	if f.err != nil {
		return nil, f.err
	}
	p.Doubts = f.doubts
	if !hasPages && p.Total >= 0 && limit > 0 {
		pages, hasPages = ceilDiv(p.Total, limit), true
	}
	// the spec defines HasMore as page < totalPages; without both, only an explicit hasMore asks for more
	if hasPages && page > 0 {
		more = page < pages
	}
	p.Page, p.PageSize, p.PageCount, p.HasMore = int(page), int(limit), int(pages), more
	return p, nil
}

func (e *header) webhookPage() (*ListPage, error) {
	var f fields
	p := &ListPage{Message: e.message(), Total: -1, NextStartingAfter: text(e.NextStartingAfter)}
	if t, ok := f.int("total", e.Total); ok {
		p.Total = t
	}
	more, hasMore := f.bool("hasMore", e.HasMore)
	if f.err != nil {
		return nil, f.err
	}
	p.Doubts = f.doubts
	if !hasMore {
		more = p.NextStartingAfter != ""
	}
	if more && p.NextStartingAfter == "" {
		// following an empty cursor would restart from the newest page and loop forever
		return nil, errors.New("nextStartingAfter: null while hasMore is true")
	}
	p.HasMore = more
	return p, nil
}
