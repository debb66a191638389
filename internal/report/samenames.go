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
	// chars holds, per kind, every way a shared name is written (the sheets print names from
	// the same lists) → how many runes of an ID tell that name's IDs apart; looked up for every
	// printed name, so without building a string
	chars map[string]map[string]int
}

// minIDPrefix is the shortest start of an ID shown: eight hex digits of a UUID tell a few
// thousand namesakes apart, and are as many as the credit summary shows for products.
// samenames.sql says so too.
const minIDPrefix = 8

func loadSameNames(ctx context.Context, conn *sql.Conn) (*sameNames, error) {
	if err := registerNameKey(ctx, conn); err != nil {
		return nil, fmt.Errorf("shared names: %w", err)
	}
	rows, err := conn.QueryContext(ctx, sameNamesSQL)
	if err != nil {
		return nil, fmt.Errorf("shared names: %w", err)
	}
	defer rows.Close()
	n := &sameNames{chars: map[string]map[string]int{}}
	for rows.Next() {
		var kind, name string
		var chars int
		if err := rows.Scan(&kind, &name, &chars); err != nil {
			return nil, fmt.Errorf("shared names: %w", err)
		}
		if n.chars[kind] == nil {
			n.chars[kind] = map[string]int{}
		}
		n.chars[kind][name] = max(chars, minIDPrefix)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("shared names: %w", err)
	}
	return n, nil
}

func prefix(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// label is name as a printed sheet and the summary's headline show it (kind "customer" or
// "product"): when another one carries the name too, followed by the start of id,
// "Budi Santoso (9b1431cf…)", a name longer than a column's text cut so that the start shows;
// ok is false, and name to be printed as it is, when nobody else carries it.
func (n *sameNames) label(kind, name, id string) (string, bool) {
	if n == nil || name == "" || id == "" {
		return name, false
	}
	p, ok := n.chars[kind][name]
	if !ok {
		return name, false
	}
	if utf8.RuneCountInString(name) > maxTextWidth {
		// the column is as wide as a long name and the ID's start: the start must show
		name = string([]rune(name)[:maxTextWidth-1]) + "…"
	}
	if short := prefix(id, p); short != id {
		return name + " (" + short + "…)", true
	}
	return name + " (" + id + ")", true
}

// maxTextWidth is the widest a text column gets, in characters; longer
// values wrap.
const maxTextWidth = 40
