package api

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// What the client checks in every record it hands on, before anyone stores it: that its text is
// UTF-8 (JSON's only encoding; DuckDB's JSON functions read other bytes as no JSON at all, and the
// merge then said "not a JSON object" of a record that is one), and that it holds no part of the
// API key, which a service may echo into a free-text field (a customer's name, a note).

// EncodingError is a record whose bytes are not UTF-8. It is the service's data, not a transient
// fault: sending the request again brings the same bytes, so it is not retried.
type EncodingError struct {
	Item   int    // the record's index on its page; -1 for a detail's single record
	ID     string // the record's id, "" when it could not be found
	Field  string // the member whose value holds the bytes, "" when none could be told
	Offset int    // where in the record the first byte that is not UTF-8 is
	Byte   byte
}

func (e *EncodingError) Error() string {
	where := "the record"
	if e.Item >= 0 {
		where = fmt.Sprintf("item %d", e.Item)
	}
	if e.ID != "" {
		where += fmt.Sprintf(" (id %q)", e.ID)
	} else {
		where += " (no id found)"
	}
	field := ""
	if e.Field != "" {
		field = fmt.Sprintf(" in %q", e.Field)
	}
	return fmt.Sprintf("%s: the text%s is not UTF-8 (byte 0x%02x at byte %d of the record): "+
		"the service sent it in another encoding (JSON is UTF-8 only; Latin-1 or Windows-1252 look like this); "+
		"billsync does not guess the encoding, so nothing of the page is stored until the service sends it as UTF-8",
		where, field, e.Byte, e.Offset)
}

var (
	idMember   = regexp.MustCompile(`"id"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?\d+))`)
	lastMember = regexp.MustCompile(`"((?:[^"\\]|\\.){1,80})"\s*:\s*[^:]*$`)
)

// checkUTF8 finds the first record of items whose bytes are not UTF-8. The page is checked whole
// first: valid pages (all of them, normally) cost one fast pass.
func checkUTF8(body []byte, items []json.RawMessage, detail bool) error {
	if utf8.Valid(body) {
		return nil
	}
	for i, it := range items {
		if utf8.Valid(it) {
			continue
		}
		at := 0
		for at < len(it) {
			r, n := utf8.DecodeRune(it[at:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			at += n
		}
		e := &EncodingError{Item: i, Offset: at, Byte: it[at]}
		if detail {
			e.Item = -1
		}
		if m := idMember.FindSubmatch(it); m != nil {
			e.ID = string(m[1]) + string(m[2])
		}
		if m := lastMember.FindSubmatch(it[:at]); m != nil {
			e.Field = string(m[1])
		}
		return e
	}
	return nil // outside the records: the envelope's decode says what is wrong
}

// minRecordRun is the shortest run of the key's characters redacted from a record: shorter runs
// are too common in names and notes to tell from the key.
const minRecordRun = 8

// Redacted is the mark that replaces the key, or a run of it, in a record's text.
const Redacted = "[redacted]"

// Redaction says where a record's text held the API key, or a run of minRecordRun or more of its
// characters, now replaced by Redacted in the record handed on.
type Redaction struct {
	Item   int      // the record's index on its page
	ID     string   // the record's id, "" when it has none
	Fields []string // the members whose values (or names) held it
	Runs   int      // how many runs were replaced
}

// keyScreen finds the runs of the key in a text, cheaply: any run of minRecordRun characters of
// the key covers a text position divisible by 4 followed by 3 more of the run, so reading 4 bytes
// at every 4th position and looking them up in a bit set of the key's 4-byte windows finds a
// sample inside every such run; a sample that hits is checked against the key's windows and
// extended both ways to the run's whole length. A text is read at a quarter of its positions, one
// load and one bit test each, and words the key happens to share (a key ending "-payments" shares
// "paym" with a record's text) cost one comparison each. A key shorter than 2*minRecordRun is
// only redacted whole, like redactSecret's fragments.
type keyScreen struct {
	key  string
	bits *[1024]uint64    // 1<<16 bits: the key's 4-byte windows, hashed
	at   map[uint32][]int // where each 4-byte window occurs in the key
}

func newKeyScreen(key string) *keyScreen {
	s := &keyScreen{key: key, bits: new([1024]uint64), at: map[uint32][]int{}}
	for i := 0; i+4 <= len(key); i++ {
		w := binary.LittleEndian.Uint32([]byte(key[i : i+4]))
		s.bits[screenWord(w)] |= screenBit(w)
		s.at[w] = append(s.at[w], i)
	}
	return s
}

// screenWord and screenBit place a 4-byte window's 16-bit hash in the bit set (runs spells
// them out: its loop is the screen's whole cost).
func screenWord(w uint32) uint32 { return (w * screenMul) >> 22 }
func screenBit(w uint32) uint64  { return 1 << ((w * screenMul >> 16) & 63) }

const screenMul = 0x9E3779B1

// runs are the maximal runs of minRecordRun or more of the key's characters in b, as [start, end)
// pairs in order; first stops at the first.
func (s *keyScreen) runs(b []byte, first bool) [][2]int {
	if s == nil || s.key == "" {
		return nil
	}
	short := len(s.key) < 2*minRecordRun // only the whole key is a run
	if len(s.key) < minRecordRun {
		var out [][2]int
		for i := 0; ; {
			j := bytesIndex(b[i:], s.key)
			if j < 0 {
				return out
			}
			out = append(out, [2]int{i + j, i + j + len(s.key)})
			if first {
				return out
			}
			i += j + len(s.key)
		}
	}
	var out [][2]int
	bits := s.bits
	for p := 0; p+4 <= len(b); p += 4 {
		w := binary.LittleEndian.Uint32(b[p : p+4])
		if h := w * screenMul; bits[h>>22]&(1<<(h>>16&63)) == 0 { // screenWord, screenBit
			continue
		}
		if len(out) > 0 && p < out[len(out)-1][1] {
			continue // inside a run already found
		}
		best := [2]int{}
		for _, j := range s.at[w] {
			if short {
				if st := p - j; st >= 0 && st+len(s.key) <= len(b) && string(b[st:st+len(s.key)]) == s.key {
					best = [2]int{st, st + len(s.key)}
				}
				continue
			}
			lo, hi := p, p+4
			for k := j; lo > 0 && k > 0 && b[lo-1] == s.key[k-1]; k-- {
				lo--
			}
			for k := j + 4; hi < len(b) && k < len(s.key) && b[hi] == s.key[k]; k++ {
				hi++
			}
			if hi-lo > best[1]-best[0] {
				best = [2]int{lo, hi}
			}
		}
		if best[1]-best[0] < minRecordRun {
			continue
		}
		if len(out) > 0 && best[0] < out[len(out)-1][1] {
			out[len(out)-1][1] = max(out[len(out)-1][1], best[1])
		} else {
			out = append(out, best)
		}
		if first {
			return out
		}
	}
	return out
}

func bytesIndex(b []byte, s string) int { return bytes.Index(b, []byte(s)) }

// mayHold says whether b may hold a run of the key: it does, or it holds a \u or \/ escape,
// which could spell the key in other bytes (false: it surely holds none).
func (s *keyScreen) mayHold(b []byte) bool {
	if s == nil || s.key == "" {
		return false
	}
	return len(s.runs(b, true)) > 0 || spellsEscaped(b)
}

// spellsEscaped says whether b holds a \u or \/ escape: most bodies hold no backslash at all,
// and one search for it reads them at memchr's speed.
func spellsEscaped(b []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 || i+j+1 >= len(b) {
			return false
		}
		if c := b[i+j+1]; c == 'u' || c == '/' {
			return true
		}
		i += j + 2
	}
}

// redactItems replaces every run of the key in the strings of items (member names and values)
// with Redacted, in place, and says which records it changed. A page without a possible run
// costs one screening pass.
func (s *keyScreen) redactItems(body []byte, items []json.RawMessage) []Redaction {
	if !s.mayHold(body) {
		return nil
	}
	var out []Redaction
	for i, it := range items {
		if !s.mayHold(it) {
			continue
		}
		red, fields, runs := s.redactRecord(it)
		if runs == 0 {
			continue
		}
		items[i] = red
		r := Redaction{Item: i, Fields: fields, Runs: runs}
		if m := idMember.FindSubmatch(red); m != nil {
			r.ID = string(m[1]) + string(m[2])
		}
		out = append(out, r)
	}
	return out
}

// redactRecord walks rec's string tokens; a string holding a run of the key is written again,
// JSON-encoded, with each run replaced, so the record stays valid JSON (and no longer byte for
// byte what the service sent). fields names the members concerned.
func (s *keyScreen) redactRecord(rec []byte) (out []byte, fields []string, runs int) {
	var b []byte
	last := 0
	member := ""
	for i := 0; i < len(rec); i++ {
		if rec[i] != '"' {
			continue
		}
		end, escaped := quotedEnd(rec, i)
		if end < 0 {
			break
		}
		tok := rec[i : end+1]
		isName := nextNonSpace(rec, end+1) == ':'
		text := tok[1 : len(tok)-1]
		if escaped {
			var str string
			if json.Unmarshal(tok, &str) != nil {
				i = end
				continue
			}
			text = []byte(str)
		}
		red, n := s.redactText(text)
		if isName {
			member = red // a name that held the key is named redacted
		}
		if n > 0 {
			enc, _ := json.Marshal(red)
			b = append(append(b, rec[last:i]...), enc...)
			last = end + 1
			runs += n
			if !containsString(fields, member) {
				fields = append(fields, member)
			}
		}
		i = end
	}
	if runs == 0 {
		return rec, nil, 0
	}
	return append(b, rec[last:]...), fields, runs
}

// redactText replaces every run of minRecordRun or more of the key's characters in t (the key
// itself, for a short key).
func (s *keyScreen) redactText(t []byte) (string, int) {
	rs := s.runs(t, false)
	if len(rs) == 0 {
		return string(t), 0
	}
	var b []byte
	last := 0
	for _, r := range rs {
		b = append(append(b, t[last:r[0]]...), Redacted...)
		last = r[1]
	}
	return string(append(b, t[last:]...)), len(rs)
}

// quotedEnd is the index of the quote closing the JSON string opening at rec[i], -1 when none;
// escaped says whether the string holds a backslash escape.
func quotedEnd(rec []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(rec); j++ {
		switch rec[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return -1, escaped
}

func nextNonSpace(b []byte, i int) byte {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b[i]
	}
	return 0
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
