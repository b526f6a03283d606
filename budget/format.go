package budget

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/quiverhq/quiver/store"
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
		for keep > 2 && digits[keep-1] == '0' {
			keep--
		}
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

// ParseMoney reads an amount of the prices' currency unit, as an admin
// writes it ("5", "5.50", "$0.0042", "1,000"), into millionths. It refuses
// a negative amount, more than six decimals, and anything over
// store.MaxBudget micros.
func ParseMoney(s string) (int64, error) {
	t := strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(s), "$"), ",", "")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" || strings.Trim(whole+frac, "0123456789") != "" || len(frac) > 6 {
		return 0, fmt.Errorf("amount %q: write it like 5 or 5.50 (at most six decimals, not negative)", s)
	}
	if len(whole) > 10 {
		return 0, fmt.Errorf("amount %q is over the largest budget (%s)", s, Money(store.MaxBudget))
	}
	w, _ := strconv.ParseInt(cmp.Or(whole, "0"), 10, 64)
	f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	n := w*1_000_000 + f
	if n > store.MaxBudget {
		return 0, fmt.Errorf("amount %q is over the largest budget (%s)", s, Money(store.MaxBudget))
	}
	return n, nil
}
