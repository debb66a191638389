package report

import (
	"testing"
)

// TestCodeNameRemembersLast: the name remembered for the last code is never another code's,
// whatever order codes come in.
func TestCodeNameRemembersLast(t *testing.T) {
	l := langs["id"]
	c := column{codes: true, names: map[string]string{}}
	for _, code := range []string{"FAILED", "FAILED", "", "physical_product", "", "FAILED", "physical_product", "unknown_code", "FAILED"} {
		if got, want := c.codeName(code, l), l.codeName(code); got != want {
			t.Errorf("codeName(%q) = %q, want %q", code, got, want)
		}
	}
}
