package jobs

import (
	"sort"
	"strings"
)

// Summary is what a plan adds up to: its rows per state, and per product (or the kind's other grouping) the
// rows and the total amount, all of them and those a run still sends.
type Summary struct {
	Kind    Kind
	Rows    int
	States  map[State]int
	GroupBy string // the Current field rows are grouped by; "" = one group
	Unit    unit   // of Total; "" = the kind sums no amount
	Groups  []*Group
}

// Group is one product's (or link's) share of a plan.
type Group struct {
	Name               string
	Rows, ToSend       int
	Total, TotalToSend float64
}

// Summarize adds a plan up.
func Summarize(p *Plan) *Summary {
	var tr traits
	k, err := kindOf(p.Kind)
	if err == nil {
		tr = k.traits()
	}
	s := &Summary{Kind: p.Kind, Rows: len(p.Actions), States: map[State]int{}, GroupBy: tr.group, Unit: tr.unit}
	by := map[string]*Group{}
	for _, a := range p.Actions {
		s.States[a.State]++
		name := ""
		if tr.group != "" {
			name = a.Current[tr.group]
		}
		g := by[name]
		if g == nil {
			g = &Group{Name: name}
			by[name] = g
			s.Groups = append(s.Groups, g)
		}
		g.Rows++
		open := stateTexts[a.State].toSend
		if open {
			g.ToSend++
		}
		if k != nil {
			if v, ok := k.amount(a.Request); ok {
				g.Total += v
				if open {
					g.TotalToSend += v
				}
			}
		}
	}
	sort.SliceStable(s.Groups, func(i, k int) bool { return s.Groups[i].Name < s.Groups[k].Name })
	return s
}

// ToSend is the rows a run still sends or first checks.
func (s *Summary) ToSend() int {
	n := 0
	for _, g := range s.Groups {
		n += g.ToSend
	}
	return n
}

func statesText(s *Summary, l lang) string {
	var parts []string
	for _, st := range stateOrder {
		if n := s.States[st]; n > 0 {
			parts = append(parts, l.group(int64(n))+" "+l.state(st))
		}
	}
	for st, n := range s.States { // a state missing from stateOrder still shows
		if _, known := stateTexts[st]; !known {
			parts = append(parts, l.group(int64(n))+" "+string(st))
		}
	}
	return l.group(int64(s.Rows)) + ": " + strings.Join(parts, ", ")
}

// fieldOrder lists the keys used by any action: the kind's input columns first, then the rest sorted.
func fieldOrder(p *Plan, m func(*Action) map[string]string) []string {
	seen := map[string]bool{}
	for _, a := range p.Actions {
		for k := range m(a) {
			seen[k] = true
		}
	}
	var out []string
	if s, err := kindOf(p.Kind); err == nil {
		for _, c := range s.traits().columns {
			if seen[c.name] {
				out = append(out, c.name)
				delete(seen, c.name)
			}
		}
	}
	var rest []string
	for k := range seen {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	return append(out, rest...)
}
