package api

import "encoding/json"

// RepeatedKey returns the first key that occurs twice in one object of the JSON value raw, at any depth.
// Decoders disagree on such a record (Go's encoding/json keeps the last value, DuckDB's JSON functions
// the first), so a record with one has no single reading: whoever reads it must treat it as invalid. raw
// is expected to be well-formed JSON (a list item the page's decoder already split out); a key written
// with escapes is compared as it decodes ("a" and "\u0061" are the same key).
func RepeatedKey(raw []byte) (string, bool) {
	var stack []keyFrame
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
			j, escaped := i+1, false
			for ; j < len(raw) && raw[j] != '"'; j++ {
				if raw[j] == '\\' {
					escaped = true
					j++
				}
			}
			if expectKey && len(stack) > 0 {
				key := string(raw[i+1 : min(j, len(raw))])
				if escaped {
					var s string
					if json.Unmarshal(raw[i:min(j+1, len(raw))], &s) == nil {
						key = s
					}
				}
				if stack[len(stack)-1].seen(key) {
					return key, true
				}
			}
			i = j
			expectKey = false
		}
	}
	return "", false
}

// keyFrame is one open object or array of RepeatedKey's scan.
type keyFrame struct {
	obj  bool
	keys []string        // an object's keys so far
	set  map[string]bool // the same, once there are many
}

// seen records key in the object and says whether it was there already.
func (f *keyFrame) seen(key string) bool {
	if f.set != nil {
		if f.set[key] {
			return true
		}
		f.set[key] = true
		return false
	}
	for _, k := range f.keys {
		if k == key {
			return true
		}
	}
	f.keys = append(f.keys, key)
	if len(f.keys) > 16 {
		f.set = make(map[string]bool, 2*len(f.keys))
		for _, k := range f.keys {
			f.set[k] = true
		}
		f.keys = nil
	}
	return false
}
