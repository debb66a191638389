package api

import (
	"bytes"
	"encoding/json"
)

// RepeatedKey returns the first key that occurs twice in one object of the JSON value raw, at any depth.
// Decoders disagree on such a record (Go's encoding/json keeps the last value, DuckDB's JSON functions
// the first), so a record with one has no single reading: whoever reads it must treat it as invalid. raw
// is expected to be well-formed JSON (a list item the page's decoder already split out); a key written
// with escapes is compared as it decodes ("a" and "\u0061" are the same key). It allocates nothing for a
// record of a few levels and keys without escapes: the sync scans every record with it.
func RepeatedKey(raw []byte) (string, bool) {
	var buf [8]keyFrame
	stack := buf[:0]
	expectKey := false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{':
			stack = append(stack, keyFrame{obj: true})
			expectKey = true
		case '[':
			stack = append(stack, keyFrame{})
			expectKey = false
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].obj
		case ':':
			expectKey = false
		case '"':
			j := stringEnd(raw, i+1)
			if expectKey && len(stack) > 0 {
				end := min(j, len(raw))
				f := &stack[len(stack)-1]
				if bytes.IndexByte(raw[i+1:end], '\\') >= 0 {
					// compared as it decodes, in the frame's map
					var k string
					if json.Unmarshal(raw[i:min(j+1, len(raw))], &k) != nil {
						k = string(raw[i+1 : end])
					}
					if f.seenString(raw, k) {
						return k, true
					}
				} else if f.seen(raw, i+1, end) {
					return string(raw[i+1 : end]), true
				}
			}
			i = j
			expectKey = false
		}
	}
	return "", false
}

// stringEnd is the index of the quote that ends the string starting at from (just after its opening quote),
// len(raw) when it does not end: a quote preceded by an odd number of backslashes is escaped.
func stringEnd(raw []byte, from int) int {
	for j := from; ; {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return len(raw)
		}
		j += k
		n := 0
		for b := j - 1; b >= from && raw[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
		j++
	}
}

// keyFrame is one open object or array of RepeatedKey's scan. An object's first keys are kept as
// offsets into raw (no copy, no allocation, and little to clear per record); beyond them, or for a key
// written with escapes, every key goes to a map.
type keyFrame struct {
	obj   bool
	first [48][2]int32 // start and end in raw of the object's first keys
	n     int
	set   map[string]bool // every key, once first is full or a key needed decoding
}

// seen records the key raw[start:end] in the object and says whether it was there already.
func (f *keyFrame) seen(raw []byte, start, end int) bool {
	key := raw[start:end]
	if f.set == nil {
		for _, o := range f.first[:f.n] {
			if int(o[1]-o[0]) == len(key) && bytes.Equal(raw[o[0]:o[1]], key) {
				return true
			}
		}
		if f.n < len(f.first) && end <= 1<<31-1 {
			f.first[f.n] = [2]int32{int32(start), int32(end)}
			f.n++
			return false
		}
	}
	return f.seenString(raw, string(key))
}

// seenString is seen for a key as a string: the frame's keys move to its map first.
func (f *keyFrame) seenString(raw []byte, key string) bool {
	if f.set == nil {
		f.set = make(map[string]bool, 2*len(f.first))
		for _, o := range f.first[:f.n] {
			f.set[string(raw[o[0]:o[1]])] = true
		}
	}
	if f.set[key] {
		return true
	}
	f.set[key] = true
	return false
}
