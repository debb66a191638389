package api

import "testing"

// TestRepeatedKey: a key twice in one object, at any depth and however it is escaped, is found; the same key
// in sibling or nested objects, in arrays and inside string values is not a repeat.
func TestRepeatedKey(t *testing.T) {
	many := `{`
	for i := 0; i < 40; i++ {
		many += `"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`
	}
	for _, tc := range []struct {
		raw, key string
	}{
		{`{"id":"a","customerId":"c1","customerId":"c2"}`, "customerId"},
		{`{"id":"a","x":{"b":1,"b":2}}`, "b"},
		{`{"id":"a","list":[{"b":1},{"c":1,"c":2}]}`, "c"},
		{`{"a":1,"\u0061":2}`, "a"},
		{`{"a\"b":1, "a\"b" : 2}`, `a"b`},
		{`{"v":"x\"y","w":"z\\","v":1}`, "v"},
		{`{"v":"\\\"","w":{"v":1},"x":2}`, ""},
		{many + `"kza":1,"kza":2}`, "kza"},
		{many + `"kab":2}`, "kab"},
		{`{"id":"a","x":{"id":"b"},"y":[{"id":"c"},{"id":"d"}]}`, ""},
		{`{"s":"\"id\":1,\"id\":2","t":"{\"a\":1,\"a\":1}"}`, ""},
		{`{"a":[1,2,{"a":3}],"b":{"a":{"a":4}}}`, ""},
		{`[{"a":1},{"a":2}]`, ""},
		{`"not an object"`, ""},
		{many + `"z":1}`, ""},
	} {
		key, ok := RepeatedKey([]byte(tc.raw))
		if key != tc.key || ok != (tc.key != "") {
			t.Errorf("%.60s: %q %v, want %q", tc.raw, key, ok, tc.key)
		}
	}
}
