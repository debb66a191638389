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
				key := raw[i+1 : min(j, len(raw))]
				if bytes.IndexByte(key, '\\') >= 0 {
					var s string
					if json.Unmarshal(raw[i:min(j+1, len(raw))], &s) == nil {
						key = []byte(s)
					}
				}
				if stack[len(stack)-1].seen(key) {
					return string(key), true
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

// keyFrame is one open object or array of RepeatedKey's scan.
type keyFrame struct {
	obj   bool
	first [12][]byte      // an object's first keys, without allocating
	n     int             // keys in first
	set   map[string]bool // every key, once there are more than first holds
}

// seen records key in the object and says whether it was there already.
func (f *keyFrame) seen(key []byte) bool {
	if f.set != nil {
		if f.set[string(key)] {
			return true
		}
		f.set[string(key)] = true
		return false
	}
	for _, k := range f.first[:f.n] {
		if bytes.Equal(k, key) {
			return true
		}
	}
	if f.n < len(f.first) {
		f.first[f.n] = key
		f.n++
		return false
	}
	f.set = make(map[string]bool, 4*len(f.first))
	for _, k := range f.first {
		f.set[string(k)] = true
	}
	f.set[string(key)] = true
	return false
}
