package calc

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"integer", 42, "42"},
		{"float noise", 0.1 + 0.2, "0.3"},
		{"repeating fraction", 2.0 / 3, "0.666666666667"},
		{"exact fraction", 10.0 / 4, "2.5"},
		{"negative", -1.25, "-1.25"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"zero", 0, "0"},
		{"large exponent form", 1e21, "1e+21"},
		{"million", 1e6, "1000000"},
		{"twelve digit integer", 123456789012, "123456789012"},
		{"thirteen digit integer", 1234567890123, "1.23456789012e+12"},
		{"rounding carries into exponent form", 999999999999.5, "1e+12"},
		{"large", 123456789012345678901, "1.23456789012e+20"},
		{"rounds to twelve digits", 1.23456789012345, "1.23456789012"},
		{"small exponent form", 0.00001234, "1.234e-05"},
		{"small plain form", 0.0001234, "0.0001234"},
		{"max float", math.MaxFloat64, "1.79769313486e+308"},
		{"smallest subnormal", math.SmallestNonzeroFloat64, "4.94065645841e-324"},
		{"infinity", math.Inf(1), "+Inf"},
		{"nan", math.NaN(), "NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Format(tc.in)); diff != "" {
				t.Errorf("Format(%v) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
