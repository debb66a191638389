package fetch

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/billsync/billsync/internal/entity"
)

const webhookStream = string(entity.WebhookDeliveries)

// webhookPath is the delivery history's declared path, for messages.
var webhookPath = mustDecl(entity.WebhookDeliveries).Paths[0]

// webhookLimit is the spec's maximum page size for webhook history.
const webhookLimit = 50

// webhookStream reads delivery history forward from the stored cursor. Deliveries change status
// after they are first listed (pending, retried, failed), so each run starts WebhookReread before
// the cursor and the warehouse upserts by id; the cursor only moves when the stream completes.
func (s *syncer) webhookStream(ctx context.Context) (StreamResult, error) {
	res := StreamResult{Stream: webhookStream}
	cur, err := s.sink.Cursor(ctx, webhookStream)
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
	li, err := s.sink.List(entity.WebhookDeliveries)
	if err != nil {
		return res, err
	}
	limit := min(s.opts.PageSize, webhookLimit)
	g := newGuard("GET "+webhookPath, s.opts.MaxPages, nil)
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
		if err := s.flagRedactions(ctx, webhookStream, webhookPath, page, p); err != nil {
			return res, err
		}
		if err := li.Add(ctx, page, p.Items); err != nil {
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
	// Incremental: never read whole, so nothing is marked deleted.
	err = li.Finish(ctx)
	res.Merge = s.sink.Merged(entity.WebhookDeliveries)
	if err != nil {
		return res, err
	}
	res.Complete = true
	// The newest createdAt read moves the cursor. The merge parsed and validated it (a record
	// without one, or with an unreadable one, failed the merge with its location).
	read, ok, err := s.sink.NewestCreated(ctx, entity.WebhookDeliveries)
	if err != nil {
		return res, err
	}
	if ok {
		newest = max(newest, read.UnixMilli())
	}
	// The cursor never advances past the run's clock (the service's when it agrees with this
	// machine's, else this machine's): a delivery dated in the future (which the merge refuses
	// beyond a day) must not make the next runs skip everything until then. Under a service
	// clock ahead, its deliveries are dated ahead of this machine's clock as a rule: the run's one
	// warning said so already.
	if now := s.sink.ObservedAt().UnixMilli(); newest > now {
		level := slog.LevelWarn
		if _, setAside, _, _ := s.clock.report(); setAside || newest <= s.clock.earlier.Add(plausibleAhead).UnixMilli() {
			// said already: the run's warning, or an earlier run's (a delivery the service dated
			// while its clock ran ahead, re-read in the window after its clock was set right)
			level = slog.LevelInfo
		}
		s.opts.Log.Log(ctx, level, "webhook cursor held at the run's clock: a delivery is dated after it",
			"newest_createdAt", newest, "run_clock", now)
		newest = now
	}
	if newest > 0 {
		err = s.sink.SetCursor(ctx, webhookStream, strconv.FormatInt(newest, 10))
	}
	return res, err
}
