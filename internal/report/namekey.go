package report

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"unicode"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/duckdb/duckdb-go/v2"
	"golang.org/x/text/unicode/norm"
)

// Names that look alike to a reader are one name for telling namesakes apart (samenames.sql):
// "Budi\u200b Santoso" (a zero-width space), "\u202eosotnaS iduB" (a right-to-left override:
// it displays as "Budi Santoso") and "Вudi Santoso" (a Cyrillic В) beside a real Budi Santoso
// each get the start of their ID, as two customers called Budi Santoso do. nameKey is what a
// reader sees of a name, as a key: the characters in the order they are drawn, without those
// drawn as nothing, in their compatibility form (NFKC: full-width and mathematical letters as
// the letters, ligatures spelled out), Cyrillic, Greek and Armenian letters drawn like Latin ones
// as those (after Unicode TR39's confusables, for the letters names use), case ignored and runs
// of spaces as one.
func nameKey(name string) string {
	rs := []rune(name)
	if hasBidiControl(rs) {
		rs = drawnOrder(rs)
	}
	out := rs[:0]
	for _, r := range rs {
		if !ignorable(r) {
			out = append(out, r)
		}
	}
	s := norm.NFKC.String(string(out))
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if l, ok := latinLookAlike[r]; ok {
			r = l
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// ignorable: drawn as nothing (cellsafe.Invisible), or a variation selector, which only picks
// a glyph.
func ignorable(r rune) bool {
	return cellsafe.Invisible(r) && r != '\t' && r != '\n' && r != '\r' ||
		r >= 0xfe00 && r <= 0xfe0f || r >= 0xe0100 && r <= 0xe01ef || r >= 0x180b && r <= 0x180f
}

const (
	lre, rle, pdf, lro, rlo = 0x202a, 0x202b, 0x202c, 0x202d, 0x202e
	lri, rli, fsi, pdi      = 0x2066, 0x2067, 0x2068, 0x2069
)

func hasBidiControl(rs []rune) bool {
	for _, r := range rs {
		if r >= lre && r <= rlo || r >= lri && r <= pdi {
			return true
		}
	}
	return false
}

// bidiRun is the text between an explicit bidirectional control and its end (PDF, PDI or
// the end of the name).
type bidiRun struct {
	opener rune
	items  []any // rune or *bidiRun
}

// drawnOrder is the name's characters in the order they are drawn, as far as the explicit
// controls decide it: a right-to-left override (RLO) draws its text backwards, its inner runs
// each kept whole; an embedding or isolate leaves Latin letters in their order, so only the
// overrides are turned. Letters of right-to-left scripts are left in their stored order: they
// look like no Latin letter, so their order cannot make a name pass for another.
func drawnOrder(rs []rune) []rune {
	root := &bidiRun{}
	stack := []*bidiRun{root}
	for _, r := range rs {
		top := stack[len(stack)-1]
		switch {
		case r >= lre && r <= rlo && r != pdf, r >= lri && r <= fsi:
			run := &bidiRun{opener: r}
			top.items = append(top.items, run)
			stack = append(stack, run)
		case r == pdf:
			// ends the innermost embedding or override, not an isolate
			if len(stack) > 1 && top.opener >= lre && top.opener <= rlo {
				stack = stack[:len(stack)-1]
			}
		case r == pdi:
			// ends the innermost isolate and whatever it holds still open
			for i := len(stack) - 1; i > 0; i-- {
				if o := stack[i].opener; o >= lri && o <= fsi {
					stack = stack[:i]
					break
				}
			}
		default:
			top.items = append(top.items, r)
		}
	}
	return root.drawn(nil)
}

func (b *bidiRun) drawn(out []rune) []rune {
	if b.opener != rlo {
		for _, it := range b.items {
			out = appendItem(out, it)
		}
		return out
	}
	for i := len(b.items) - 1; i >= 0; i-- {
		out = appendItem(out, b.items[i])
	}
	return out
}

func appendItem(out []rune, it any) []rune {
	if r, ok := it.(rune); ok {
		return append(out, r)
	}
	return it.(*bidiRun).drawn(out)
}

// latinLookAlike maps letters of other scripts to the Latin letter they are drawn like, in
// the spirit of Unicode TR39's confusables: the capitals and small letters a name may be
// spelled with to pass for a Latin one.
var latinLookAlike = map[rune]rune{
	// Cyrillic capitals and small letters
	'А': 'A', 'В': 'B', 'Е': 'E', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O',
	'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'Ү': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W', 'Һ': 'H', 'Ӏ': 'I',
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ј': 'j',
	'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ү': 'y', 'ь': 'b',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ϲ': 'C', 'Ϳ': 'J',
	'ο': 'o', 'α': 'a', 'ι': 'i', 'ν': 'v', 'ρ': 'p', 'υ': 'u', 'γ': 'y', 'ϲ': 'c', 'ϳ': 'j',
	// Armenian
	'Օ': 'O', 'Ս': 'U', 'օ': 'o', 'ս': 'u', 'հ': 'h', 'ո': 'n', 'ց': 'g', 'զ': 'q',
	// Latin letters drawn like others
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i', 'ʏ': 'y',
}

// nameKeyFunc is the SQL function samenames.sql calls: nameKey of a VARCHAR.
const nameKeyFunc = "billsync_name_key"

type nameKeyUDF struct{}

func (nameKeyUDF) Config() duckdb.ScalarFuncConfig {
	varchar, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	return duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{varchar}, ResultTypeInfo: varchar}
}

func (nameKeyUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(v []driver.Value) (any, error) {
		s, ok := v[0].(string)
		if !ok {
			return nil, fmt.Errorf("%s: %T, not text", nameKeyFunc, v[0])
		}
		return nameKey(s), nil
	}}
}

// registerNameKey makes nameKeyFunc known to the database conn belongs to, once: every
// connection of the database sees it.
func registerNameKey(ctx context.Context, conn *sql.Conn) error {
	var n int
	err := conn.QueryRowContext(ctx, "SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", nameKeyFunc).Scan(&n)
	if err != nil {
		return fmt.Errorf("look for %s: %w", nameKeyFunc, err)
	}
	if n > 0 {
		return nil
	}
	if err := duckdb.RegisterScalarUDF(conn, nameKeyFunc, nameKeyUDF{}); err != nil {
		return fmt.Errorf("register %s: %w", nameKeyFunc, err)
	}
	return nil
}
