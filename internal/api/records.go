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

// keyScreen finds records that may hold a run of the key, cheaply: any run of minRecordRun
// characters of the key in a text covers a text position divisible by 4 followed by 3 more of
// the run, so reading 4 bytes at every 4th position and looking them up in a bit set of the key's
// 4-byte windows finds every such run. A record is read at a quarter of its positions, one load
// and one bit test each; only a hit (or a \u escape, which could spell the key in other bytes)
// sends it to the exact check. A key shorter than 2*minRecordRun is only redacted whole, like
// redactSecret's fragments.
type keyScreen struct {
	key  string
	bits []uint64 // 1<<16 bits: the key's 4-byte windows, hashed
}

func newKeyScreen(key string) *keyScreen {
	s := &keyScreen{key: key, bits: make([]uint64, 1<<16/64)}
	for i := 0; i+4 <= len(key); i++ {
		h := screenHash(binary.LittleEndian.Uint32([]byte(key[i : i+4])))
		s.bits[h/64] |= 1 << (h % 64)
	}
	return s
}

func screenHash(x uint32) uint32 { return (x * 0x9E3779B1) >> 16 }

// mayHold says whether b may hold a run of the key (false: it surely does not).
func (s *keyScreen) mayHold(b []byte) bool {
	if s == nil || s.key == "" {
		return false
	}
	if len(s.key) < 2*minRecordRun {
		return bytes.Contains(b, []byte(s.key)) || bytes.Contains(b, []byte(`\u`))
	}
	for i := 0; i+4 <= len(b); i += 4 {
		h := screenHash(binary.LittleEndian.Uint32(b[i:]))
		if s.bits[h/64]&(1<<(h%64)) != 0 {
			return true
		}
	}
	return bytes.Contains(b, []byte(`\u`))
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
		if isName {
			member = string(text)
		}
		if red, n := s.redactText(text); n > 0 {
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

// redactText replaces the key and every run of minRecordRun or more of its characters in t.
func (s *keyScreen) redactText(t []byte) (string, int) {
	str := string(t)
	if len(s.key) < 2*minRecordRun {
		n := bytes.Count(t, []byte(s.key))
		if n == 0 {
			return str, 0
		}
		return string(bytes.ReplaceAll(t, []byte(s.key), []byte(Redacted))), n
	}
	if !s.mayHold(t) {
		return str, 0
	}
	var b []byte
	n := 0
	for i := 0; i < len(str); {
		if l := longestKeyRun(str[i:], s.key); l >= minRecordRun {
			b = append(b, Redacted...)
			i += l
			n++
			continue
		}
		b = append(b, str[i])
		i++
	}
	if n == 0 {
		return str, 0
	}
	return string(b), n
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
