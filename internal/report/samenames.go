package report

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"unicode/utf8"
)

//go:embed samenames.sql
var sameNamesSQL string

// sameNames are the names two or more customers (or products) carry, and for each of them
// how much of its ID tells it from the others. The printed part of a sheet shows names, not
// IDs (they are reference columns, out of print): two "Budi Santoso" rows read as one
// customer twice. A shared name is printed with the start of the ID after it, the same on
// every sheet and workbook, "Budi Santoso (9b1431cf…)"; a name nobody else carries is
// printed as it is.
type sameNames struct {
	// keys holds, per kind, every way a shared name is written (the sheets print names from
	// the same lists) → the name's key; looked up for every printed name, so without
	// building a string
	keys   map[string]map[string]string
	prefix map[string]int // kind, name key, ID → runes of the ID that tell it apart
}

// minIDPrefix is the shortest start of an ID shown: eight hex digits of a UUID tell a few
// thousand namesakes apart, and are as many as the credit summary shows for products.
const minIDPrefix = 8

func loadSameNames(ctx context.Context, conn *sql.Conn) (*sameNames, error) {
	rows, err := conn.QueryContext(ctx, sameNamesSQL)
	if err != nil {
		return nil, fmt.Errorf("shared names: %w", err)
	}
	defer rows.Close()
	n := &sameNames{keys: map[string]map[string]string{}, prefix: map[string]int{}}
	var group []string // the IDs of one kind and name key
	var groupKey string
	flush := func() {
		p := idPrefixLen(group)
		for _, id := range group {
			n.prefix[groupKey+"\x00"+id] = p
		}
		group = group[:0]
	}
	for rows.Next() {
		var kind, key, name, account, id string
		if err := rows.Scan(&kind, &key, &name, &account, &id); err != nil {
			return nil, fmt.Errorf("shared names: %w", err)
		}
		if gk := kind + "\x00" + key; gk != groupKey {
			flush()
			groupKey = gk
		}
		if n.keys[kind] == nil {
			n.keys[kind] = map[string]string{}
		}
		n.keys[kind][name] = key
		if len(group) == 0 || group[len(group)-1] != id {
			group = append(group, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("shared names: %w", err)
	}
	flush()
	return n, nil
}

// idPrefixLen is how many runes of each ID tell the IDs apart: minIDPrefix, or more when two
// of them begin alike.
func idPrefixLen(ids []string) int {
	p := minIDPrefix
	for {
		seen := make(map[string]bool, len(ids))
		longest, clash := 0, false
		for _, id := range ids {
			longest = max(longest, utf8.RuneCountInString(id))
			s := prefix(id, p)
			clash = clash || seen[s]
			seen[s] = true
		}
		if !clash || p >= longest {
			return p
		}
		p++
	}
}

func prefix(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// suffix is what follows the name of the customer or product id (kind "customer", "product")
// when printed: the start of the ID, " (9b1431cf…)", when another one carries the name too,
// else nothing.
func (n *sameNames) suffix(kind, name, id string) string {
	if n == nil || name == "" || id == "" {
		return ""
	}
	key, ok := n.keys[kind][name]
	if !ok {
		return ""
	}
	p, ok := n.prefix[kind+"\x00"+key+"\x00"+id]
	if !ok {
		p = minIDPrefix // an ID the lists do not hold under this name
	}
	if short := prefix(id, p); short != id {
		return " (" + short + "…)"
	}
	return " (" + id + ")"
}
