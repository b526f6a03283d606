package intent

import (
	"math"
	"testing"
)

// TestPortableExp: within a few ulps of math.Exp over the range the
// classifier uses.
func TestPortableExp(t *testing.T) {
	for x := -40.0; x <= 40; x += 0.0137 {
		got, want := portableExp(x), math.Exp(x)
		if math.Abs(got-want) > 1e-14*want {
			t.Fatalf("portableExp(%v) = %v, math.Exp %v", x, got, want)
		}
	}
	if s := sigmoid(1000); s != 1/(1+portableExp(-40)) {
		t.Fatalf("sigmoid is not clamped: %v", s)
	}
}
