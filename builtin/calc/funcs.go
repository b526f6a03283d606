package calc

import (
	"fmt"
	"math"
	"strings"
)

// function is a callable name. maxArgs < 0 means no upper bound.
type function struct {
	name             string
	minArgs, maxArgs int
	call             func(args []float64) float64
}

// parseName parses a constant or a function call whose name token t has been
// consumed.
func (p *parser) parseName(t token) (node, error) {
	name := strings.ToLower(t.text)
	if !p.at('(') {
		if v, ok := constant(name); ok {
			return number(v), nil
		}
		if _, ok := lookup(name); ok {
			return nil, fmt.Errorf("function %s needs its arguments in parentheses, as in %s(2)", t.text, name)
		}
		return nil, fmt.Errorf("unknown identifier %q (the constants are pi and e)", t.text)
	}
	fn, ok := lookup(name)
	if !ok {
		if _, isConst := constant(name); isConst {
			return nil, fmt.Errorf("%s is a constant, not a function", t.text)
		}
		return nil, fmt.Errorf("unknown function %q", t.text)
	}
	p.next() // "("
	if err := p.open(); err != nil {
		return nil, err
	}
	args, err := p.parseArgs()
	if err != nil {
		return nil, err
	}
	if err := fn.checkArity(len(args)); err != nil {
		return nil, err
	}
	return call{fn: fn, args: args}, nil
}

// parseArgs parses a comma-separated argument list and its closing ")".
func (p *parser) parseArgs() ([]node, error) {
	var args []node
	if !p.at(')') {
		for {
			a, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if !p.at(',') {
				break
			}
			p.next()
		}
	}
	return args, p.close()
}

func (f function) checkArity(n int) error {
	plural := func(k int) string {
		if k == 1 {
			return "argument"
		}
		return "arguments"
	}
	switch {
	case f.maxArgs < 0 && n < f.minArgs:
		return fmt.Errorf("%s takes at least %d %s, got %d", f.name, f.minArgs, plural(f.minArgs), n)
	case f.maxArgs >= 0 && (n < f.minArgs || n > f.maxArgs):
		return fmt.Errorf("%s takes %d %s, got %d", f.name, f.minArgs, plural(f.minArgs), n)
	}
	return nil
}

// constant returns the value of a lower-cased constant name.
func constant(name string) (float64, bool) {
	switch name {
	case "pi", "π":
		return math.Pi, true
	case "e":
		return math.E, true
	}
	return 0, false
}

// lookup returns the function with a lower-cased name. Functions with a
// fixed arity have minArgs == maxArgs, which checkArity relies on.
func lookup(name string) (function, bool) {
	if f, ok := unaryFunc(name); ok {
		return function{name: name, minArgs: 1, maxArgs: 1, call: func(a []float64) float64 { return f(a[0]) }}, true
	}
	switch name {
	case "min":
		return function{name: name, minArgs: 1, maxArgs: -1, call: fold(math.Min)}, true
	case "max":
		return function{name: name, minArgs: 1, maxArgs: -1, call: fold(math.Max)}, true
	case "pow":
		return function{name: name, minArgs: 2, maxArgs: 2, call: func(a []float64) float64 { return math.Pow(a[0], a[1]) }}, true
	}
	return function{}, false
}

// unaryFunc returns the one-argument function with a lower-cased name.
// Trigonometric functions work in radians; log is base 10.
func unaryFunc(name string) (f func(float64) float64, ok bool) {
	switch name {
	case "sqrt":
		f = math.Sqrt
	case "abs":
		f = math.Abs
	case "round":
		f = math.Round
	case "floor":
		f = math.Floor
	case "ceil":
		f = math.Ceil
	case "exp":
		f = math.Exp
	case "ln":
		f = math.Log
	case "log":
		f = math.Log10
	case "log2":
		f = math.Log2
	case "sin":
		f = math.Sin
	case "cos":
		f = math.Cos
	case "tan":
		f = math.Tan
	case "asin":
		f = math.Asin
	case "acos":
		f = math.Acos
	case "atan":
		f = math.Atan
	}
	return f, f != nil
}

// fold applies f across one or more arguments.
func fold(f func(a, b float64) float64) func([]float64) float64 {
	return func(args []float64) float64 {
		acc := args[0]
		for _, v := range args[1:] {
			acc = f(acc, v)
		}
		return acc
	}
}
