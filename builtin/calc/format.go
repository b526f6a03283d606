package calc

import "strconv"

// Digits is the number of significant digits Format keeps.
const Digits = 12

// Format renders v for the model as strconv's 'g' format does with precision
// Digits: rounded to 12 significant digits, trailing zeros dropped, and
// exponent form when the decimal exponent is below -4 or at least 12
// (0.1+0.2 gives "0.3", 2/3 gives "0.666666666667", 1e6 gives "1000000",
// 1e21 gives "1e+21"). Rounding hides float64 noise in the last digits.
// Negative zero prints as "0"; NaN and infinities print as strconv prints
// them. Eval reads every finite output back to a value that formats the same.
func Format(v float64) string {
	if v == 0 {
		v = 0 // drops the sign of -0
	}
	return strconv.FormatFloat(v, 'g', Digits, 64)
}
