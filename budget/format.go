package budget

import (
	"fmt"
	"strconv"
	"strings"
)

// Money writes micros (millionths of the prices' currency unit) as
// "$1.50": whole cents (cut, not rounded), or two significant digits of
// an amount under a cent ("$0.0042"), never "$0.00" for one that is not
// zero.
func Money(micros int64) string {
	sign := ""
	if micros < 0 {
		sign, micros = "-", -micros
	}
	whole, frac := micros/1_000_000, micros%1_000_000
	digits := fmt.Sprintf("%06d", frac)
	keep := 2
	if whole == 0 && frac > 0 && frac < 10_000 {
		// Under a cent: two significant digits.
		keep = min(strings.IndexFunc(digits, func(r rune) bool { return r != '0' })+2, 6)
	}
	return sign + "$" + group(whole) + "." + digits[:keep]
}

// Tokens writes n with thousands separated: "12,345 tokens".
func Tokens(n int64) string {
	if n == 1 {
		return "1 token"
	}
	return group(n) + " tokens"
}

// group writes n with commas between thousands.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
