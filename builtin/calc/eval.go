package calc

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Limits on one expression. They bound the parser's recursion and work, and
// are listed in the tool's Spec.
const (
	// MaxLength is the longest expression Eval accepts, in characters.
	MaxLength = 1000
	// MaxDepth is how deeply Eval lets parentheses (grouping and function
	// calls) nest.
	MaxDepth = 64
)

var (
	errDivZero   = errors.New("division by zero")
	errModZero   = errors.New("modulo by zero")
	errNotFinite = errors.New("result is not a finite number")
)

// Eval parses and evaluates an arithmetic expression in float64.
//
// It accepts + - * / ^ % (and × ÷ −), parentheses, unary minus and plus,
// decimal numbers (".5", "1e3"), the constants pi and e, and the functions
// sqrt abs round floor ceil exp ln log log2 sin cos tan asin acos atan min
// max pow; names are case-insensitive and whitespace is ignored. ^ is
// right-associative and binds tighter than unary minus (-2^2 = -4). A %
// followed by an operand is modulo (sign of the dividend); a % after an
// operand and not followed by one is percent (50% = 0.5, 200*15% = 30).
// Trigonometric functions work in radians.
//
// Every error is a one-line, lower-case message meant for the model: a
// syntax error naming the position and the unexpected token, an unknown
// name, a wrong argument count, division or modulo by zero, a result (or
// intermediate result) that is not finite, or an expression longer than
// MaxLength characters or nested deeper than MaxDepth. Eval is safe for
// concurrent use.
func Eval(expr string) (float64, error) {
	if n := utf8.RuneCountInString(expr); n > MaxLength {
		return 0, fmt.Errorf("expression is too long: %d characters, the limit is %d", n, MaxLength)
	}
	if strings.TrimSpace(expr) == "" {
		return 0, errors.New("expression is empty")
	}
	toks, err := lex([]rune(expr))
	if err != nil {
		return 0, err
	}
	p := &parser{toks: toks}
	n, err := p.parseExpr()
	if err != nil {
		return 0, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return 0, p.unexpected(t)
	}
	return n.eval()
}

// node is a parsed expression. eval returns a finite value or an error.
type node interface {
	eval() (float64, error)
}

type number float64

func (n number) eval() (float64, error) { return float64(n), nil }

type negate struct{ x node }

func (n negate) eval() (float64, error) {
	v, err := n.x.eval()
	return -v, err
}

type percent struct{ x node }

func (n percent) eval() (float64, error) {
	v, err := n.x.eval()
	return v / 100, err
}

type binary struct {
	op   rune
	l, r node
}

func (n binary) eval() (float64, error) {
	l, err := n.l.eval()
	if err != nil {
		return 0, err
	}
	r, err := n.r.eval()
	if err != nil {
		return 0, err
	}
	switch n.op {
	case '+':
		return finite(l + r)
	case '-':
		return finite(l - r)
	case '*':
		return finite(l * r)
	case '/':
		if r == 0 {
			return 0, errDivZero
		}
		return finite(l / r)
	case '%':
		if r == 0 {
			return 0, errModZero
		}
		return finite(math.Mod(l, r))
	default: // '^'
		return finite(math.Pow(l, r))
	}
}

type call struct {
	fn   function
	args []node
}

func (n call) eval() (float64, error) {
	vals := make([]float64, len(n.args))
	for i, a := range n.args {
		v, err := a.eval()
		if err != nil {
			return 0, err
		}
		vals[i] = v
	}
	return finite(n.fn.call(vals))
}

// finite passes v through, or fails when it is NaN or infinite, so that no
// overflow or domain error is carried silently into a finite final result.
func finite(v float64) (float64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errNotFinite
	}
	return v, nil
}
