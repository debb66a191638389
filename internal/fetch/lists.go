package fetch

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
	"golang.org/x/sync/errgroup"
)

// listDef is one list stream: it reads the entity named like the stream (its table in the
// warehouse) from paths, which together are the whole list.
type listDef struct {
	stream string
	paths  []string
}

func (d listDef) entity() entity.Name { return entity.Name(d.stream) }

// lists are the list endpoints: every entity declared paged (internal/entity), in declaration
// order.
var lists = func() []listDef {
	var out []listDef
	for _, d := range entity.All() {
		if d.Paging == entity.Pages {
			out = append(out, listDef{string(d.Name), d.Paths})
		}
	}
	return out
}()

// listPasses bounds how often a list is paged again when it changed under us.
const listPasses = 2

// listStream pages every sub-list of def into one warehouse list and ends each pass with what
// the server announced. The warehouse decides from it whether the pass read the whole list (only
// then may it mark rows gone upstream); when it did not (the list's total moved while paging,
// fewer distinct records arrived than the server counts, or an id came with two contents) the
// list is paged once more (merges de-duplicate) and, if still unsettled, no deletions are
// marked this run.
func (s *syncer) listStream(def listDef) func(context.Context) (StreamResult, error) {
	return func(ctx context.Context) (StreamResult, error) {
		res := StreamResult{Stream: def.stream}
		li, err := s.sink.List(def.entity())
		if err != nil {
			return res, err
		}
		known, err := s.sink.LastRead(ctx, def.stream)
		if err != nil {
			return res, err
		}
		var conflicts []syncdata.Conflict
		watch := map[string]bool{}
		for pass := 1; pass <= listPasses && !res.Complete; pass++ {
			end := syncdata.ListEnd{Stream: def.stream, Stable: true}
			for _, path := range def.paths {
				g := newGuard("GET "+path, s.opts.MaxPages, watch)
				g.list, g.known = true, known
				lr, err := s.pageList(ctx, def.stream, li, path, g, &res)
				if err != nil {
					return res, err
				}
				end.Expected += lr.expected
				end.Stable = end.Stable && lr.stable
				for _, c := range g.conflicts {
					c.Path = path
					end.Conflicts = append(end.Conflicts, c)
				}
				if d := g.doubtText(); d != "" {
					end.Doubts = append(end.Doubts, d)
				}
			}
			if res.Complete, err = li.EndPass(ctx, end); err != nil {
				return res, err
			}
			conflicts = end.Conflicts
			for _, c := range conflicts {
				watch[c.ID] = true // the next pass keeps both versions of these
			}
			if len(end.Doubts) > 0 {
				break // the envelope says the same again: paging once more proves nothing
			}
		}
		if !res.Complete {
			res.Doubt = li.Doubt()
		}
		// A conflict that remained when the list was paged again: the last version read is kept
		// (the merges' rule), both are recorded, and the stream is partial.
		res.Conflicts = len(conflicts)
		err = li.Finish(ctx)
		res.Merge = s.sink.Merged(def.entity())
		return res, err
	}
}

type listRead struct {
	expected int64 // records the server says the list holds
	stable   bool  // the server's count did not move between the first and the last page
}

// pageList reads one paged list to its end. Page 1 tells how many pages there are; the rest are
// fetched concurrently, then paging continues one by one for as long as the server says hasMore
// (the list may have grown). Only the server's applied page size and counts are trusted, and the
// guard stops a read whose pages contradict them or repeat themselves.
func (s *syncer) pageList(ctx context.Context, stream string, li ListSink, path string, g *guard, res *StreamResult) (listRead, error) {
	first, err := s.listPage(ctx, stream, li, path, 1, g, res)
	if err != nil {
		return listRead{}, err
	}
	last, lastNo := first, 1
	if !first.HasMore && first.PageCount > 1 {
		// The envelope contradicts itself: the rest of the pages are read (within the ceiling)
		// and the list is doubted, so nothing is marked deleted from it.
		g.addDoubt(fmt.Sprintf("page 1: hasMore is false, yet pageCount is %d", first.PageCount))
	}
	if first.PageCount > 1 {
		// Only the last page is kept: it says whether the list grew while it was paged. Every
		// other page is in the warehouse's hands once added, so memory does not grow with the list.
		// The pages fetched at once stop at the guard's ceiling, whatever pageCount said.
		to := min(first.PageCount, g.ceiling+1)
		g2, gctx := errgroup.WithContext(ctx)
		g2.SetLimit(s.opts.Concurrency)
		for p := 2; p <= to; p++ {
			g2.Go(func() error {
				page, err := s.listPage(gctx, stream, li, path, p, g, res)
				if p == to {
					last = page
				}
				return err
			})
		}
		if err := g2.Wait(); err != nil {
			return listRead{}, err
		}
		lastNo = to
	}
	for last.HasMore {
		lastNo++
		if last, err = s.listPage(ctx, stream, li, path, lastNo, g, res); err != nil {
			return listRead{}, err
		}
	}
	if last.PageCount > lastNo {
		g.addDoubt(fmt.Sprintf("page %d: hasMore is false, yet pageCount is %d", lastNo, last.PageCount))
	}
	r := listRead{stable: first.Total == last.Total && first.Total >= 0 || first.Total < 0 && last.Total < 0}
	if last.Total >= 0 {
		r.expected = last.Total
	} else if last.PageSize > 0 {
		// Payment-request lists carry no total: the page structure is the count.
		r.expected = int64((lastNo-1)*last.PageSize + len(last.Items))
		if len(last.Items) == 0 && lastNo > 1 {
			r.expected = int64((lastNo - 1) * last.PageSize)
		}
	}
	return r, nil
}

func (s *syncer) listPage(ctx context.Context, stream string, li ListSink, path string, page int, g *guard, res *StreamResult) (*api.ListPage, error) {
	q := url.Values{"page": {strconv.Itoa(page)}, "pageSize": {strconv.Itoa(s.opts.PageSize)}}
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	p, err := s.c.List(ctx, path, q)
	s.release()
	if err != nil {
		return nil, fmt.Errorf("page %d of %s: %w", page, path, err)
	}
	if _, err := g.check(page, p); err != nil {
		return nil, err
	}
	if err := s.flagRedactions(ctx, stream, path, page, p); err != nil {
		return nil, err
	}
	if err := li.Add(ctx, page, p.Items); err != nil {
		return nil, err
	}
	s.count(stream, res, int64(len(p.Items)))
	return p, nil
}
