package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/billsync/billsync/internal/warehouse"
	gojson "github.com/goccy/go-json"
)

const webhookStream = "webhook_deliveries"

// webhookLimit is the spec's maximum page size for webhook history.
const webhookLimit = 50

// webhookStream reads delivery history forward from the stored cursor. Deliveries change status
// after they are first listed (pending, retried, failed), so each run starts WebhookReread before
// the cursor and the warehouse upserts by id; the cursor only moves when the stream completes.
func (s *syncer) webhookStream(ctx context.Context) (StreamResult, error) {
	res := StreamResult{Stream: webhookStream}
	cur, err := s.w.cursor(ctx, webhookStream)
	if err != nil {
		return res, err
	}
	var newest int64
	start := ""
	if cur != "" {
		ms, err := strconv.ParseInt(cur, 10, 64)
		if err != nil {
			return res, fmt.Errorf("stored cursor %q is not epoch milliseconds: %w", cur, err)
		}
		newest = ms
		if from := ms - s.opts.WebhookReread.Milliseconds(); from > 0 {
			start = strconv.FormatInt(from, 10)
		}
	}
	bt := &batcher{w: s.w, e: warehouse.WebhookDeliveries}
	limit := min(s.opts.PageSize, webhookLimit)
	g := newGuard("GET /hl/v2/webhooks/new-history", s.opts.MaxPages, nil)
	if start != "" {
		g.cursor(0, start)
	}
	for page := 1; ; page++ {
		if err := s.acquire(ctx); err != nil {
			return res, err
		}
		p, err := s.c.WebhookHistory(ctx, limit, start)
		s.release()
		if err != nil {
			return res, fmt.Errorf("page %d after %q: %w", page, start, err)
		}
		if _, err := g.check(page, p); err != nil {
			return res, err
		}
		for i, it := range p.Items {
			ms, err := createdAtMillis(it)
			if err != nil {
				return res, fmt.Errorf("page %d item %d: %w", page, i, err)
			}
			newest = max(newest, ms)
		}
		if err := bt.add(ctx, page, p.Items); err != nil {
			return res, err
		}
		s.count(webhookStream, &res, int64(len(p.Items)))
		if !p.HasMore || p.NextStartingAfter == "" || len(p.Items) == 0 {
			break
		}
		if p.NextStartingAfter == start {
			return res, fmt.Errorf("page %d: cursor did not advance past %q", page, start)
		}
		// a cursor that comes back to any value of this run loops; so does one that goes back
		if err := g.cursor(page, p.NextStartingAfter); err != nil {
			return res, err
		}
		start = p.NextStartingAfter
	}
	err = bt.finish(ctx, false)
	res.Merge = bt.merged
	if err != nil {
		return res, err
	}
	res.Complete = true
	// The cursor never advances past the server's clock: a delivery dated in the future (which the
	// merge refuses beyond a day) must not make the next runs skip everything until then.
	if now := s.w.observedAt().UnixMilli(); newest > now {
		s.opts.Log.Warn("webhook cursor held at the server's clock", "newest_createdAt", newest, "server_clock", now)
		newest = now
	}
	if newest > 0 {
		err = s.w.setCursor(ctx, webhookStream, strconv.FormatInt(newest, 10))
	}
	return res, err
}

// createdAtMillis reads a record's createdAt, which the spec gives as ISO 8601 on webhook records
// and as epoch milliseconds elsewhere; both forms are accepted.
func createdAtMillis(raw json.RawMessage) (int64, error) {
	var r struct {
		CreatedAt json.RawMessage `json:"createdAt"`
	}
	// goccy skips the fields it is not asked for; encoding/json validated whole records here and
	// was most of this stream's CPU time
	if err := gojson.Unmarshal(raw, &r); err != nil {
		return 0, fmt.Errorf("decode createdAt: %w", err)
	}
	t, err := parseTime(r.CreatedAt)
	if err != nil {
		return 0, fmt.Errorf("createdAt: %w", err)
	}
	return t.UnixMilli(), nil
}

func parseTime(v json.RawMessage) (time.Time, error) {
	var ms json.Number
	if err := json.Unmarshal(v, &ms); err == nil {
		n, err := ms.Int64()
		if err != nil {
			return time.Time{}, fmt.Errorf("%s is not epoch milliseconds", v)
		}
		return time.UnixMilli(n), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return time.Time{}, fmt.Errorf("%s is neither a number nor a string", v)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(n), nil
	}
	// ISO 8601 with an extended (+07:00) or basic (+0700) offset, or none (UTC)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999-0700", "2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time", s)
}
