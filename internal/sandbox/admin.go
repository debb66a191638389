package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// serveAdmin answers /__sandbox/<rest>; it needs no API key and exists only with Options.Admin.
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request, rest string) {
	switch {
	case rest == "advance" && r.Method == http.MethodPost:
		d, err := advanceParam(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		s.Advance(d)
		writeJSON(w, map[string]any{"statusCode": 200, "messages": "advanced " + d.String(), "now": s.Now()})
	case rest == "clock" && r.Method == http.MethodPut:
		t, err := time.Parse(time.RFC3339, r.URL.Query().Get("now"))
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("now: %q is not an RFC 3339 time (2026-11-28T09:00:00Z)", r.URL.Query().Get("now")))
			return
		}
		s.SetClock(t)
		writeJSON(w, map[string]any{"statusCode": 200, "messages": "clock set", "now": s.Now()})
	case rest == "now" && r.Method == http.MethodGet:
		writeJSON(w, map[string]any{"statusCode": 200, "messages": "success", "now": s.Now(), "nowMs": s.Now().UnixMilli()})
	case rest == "requests" && r.Method == http.MethodGet:
		writeJSON(w, map[string]any{"statusCode": 200, "messages": "success", "data": s.Requests()})
	case rest == "faults" && r.Method == http.MethodPut:
		var f Faults
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			writeError(w, http.StatusBadRequest, "faults: "+err.Error())
			return
		}
		if err := s.SetFaults(f); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, map[string]any{"statusCode": 200, "messages": "faults set", "faults": f})
	case rest == "list-order" && r.Method == http.MethodPut:
		if err := s.SetListOrder(ListOrder(r.URL.Query().Get("order"))); err != nil {
			writeError(w, http.StatusBadRequest, "order: "+err.Error())
			return
		}
		writeJSON(w, map[string]any{"statusCode": 200, "messages": "list order set", "order": s.ListOrder()})
	case rest == "list-order" && r.Method == http.MethodGet:
		writeJSON(w, map[string]any{"statusCode": 200, "messages": "success", "order": s.ListOrder()})
	case rest == "checkout/verify" && r.Method == http.MethodGet:
		if err := s.VerifyCheckoutURL(r.URL.Query().Get("url")); err != nil {
			writeJSON(w, map[string]any{"statusCode": 200, "messages": err.Error(), "valid": false})
			return
		}
		writeJSON(w, map[string]any{"statusCode": 200, "messages": "success", "valid": true})
	default:
		writeError(w, http.StatusNotFound, "Not Found: /__sandbox/"+rest)
	}
}

func advanceParam(r *http.Request) (time.Duration, error) {
	q := r.URL.Query()
	for _, p := range []struct {
		name string
		unit time.Duration
	}{{"hours", time.Hour}, {"minutes", time.Minute}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("%s: %q is not a positive number", p.name, v)
			}
			return time.Duration(n * float64(p.unit)), nil
		}
	}
	return 0, fmt.Errorf("hours or minutes: required")
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
