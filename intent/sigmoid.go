package intent

import "math"

// sigmoid is the logistic function, computed the same to the last bit on
// every platform, so that training gives the same weights everywhere
// (math.Exp uses fused multiply-add on some CPUs and not on others).
func sigmoid(z float64) float64 {
	z = max(-40, min(40, z))
	return 1 / (1 + portableExp(-z))
}

// portableExp is e^x for |x| <= 40 from IEEE operations alone: x = k·ln2
// + r with |r| <= ln2/2, e^r by its Taylor series to 16 terms (past
// float64's precision there), scaled by 2^k exactly. Every product is
// rounded on its own (an explicit conversion), so no compiler fuses it.
func portableExp(x float64) float64 {
	k := math.Round(x / math.Ln2)
	r := float64(x - float64(k*math.Ln2))
	sum, term := 1.0, 1.0
	for i := 1; i <= 16; i++ {
		term = float64(term*r) / float64(i)
		sum = float64(sum + term)
	}
	return math.Ldexp(sum, int(k))
}
