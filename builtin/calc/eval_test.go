package calc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// outcome is what a case checks: the formatted value or the error message.
type outcome struct {
	Value string
	Err   string
}

func evalOutcome(expr string) outcome {
	v, err := Eval(expr)
	if err != nil {
		return outcome{Err: err.Error()}
	}
	return outcome{Value: Format(v)}
}

func TestEval(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want string
	}{
		// Operators.
		{"add", "1+2", "3"},
		{"subtract", "5-8", "-3"},
		{"multiply", "6*7", "42"},
		{"divide", "10/4", "2.5"},
		{"power", "2^10", "1024"},
		{"modulo", "10%3", "1"},
		{"modulo fraction", "5.5%2", "1.5"},
		{"modulo keeps dividend sign", "-7%3", "-1"},
		{"modulo by negative", "7%(-3)", "1"},
		{"unicode times", "6×7", "42"},
		{"unicode divide", "10÷4", "2.5"},
		{"unicode minus", "5−8", "-3"},
		{"unicode unary minus", "−2^2", "-4"},
		// Precedence and associativity.
		{"times before plus", "2+3*4", "14"},
		{"parentheses", "(2+3)*4", "20"},
		{"power before times", "2*3^2", "18"},
		{"power before unary minus", "-2^2", "-4"},
		{"parenthesised negative base", "(-2)^2", "4"},
		{"negative exponent", "2^-1", "0.5"},
		{"power right associative", "2^3^2", "512"},
		{"power right associative with minus", "2^-1^2", "0.5"},
		{"divide left associative", "100/10/2", "5"},
		{"subtract left associative", "10-4-3", "3"},
		{"modulo left associative", "100%7%4", "2"},
		{"times then modulo", "2*7%4", "2"},
		{"unary minus after operator", "2*-3", "-6"},
		{"double unary minus", "--3", "3"},
		{"unary plus", "+-+3", "-3"},
		{"minus of group", "-(1+2)*2", "-6"},
		// Percent against modulo.
		{"percent alone", "50%", "0.5"},
		{"percent of", "200*15%", "30"},
		{"percent first", "15%*200", "30"},
		{"percent in parentheses", "(50%)", "0.5"},
		{"percent of group", "(20+30)%", "0.5"},
		{"double percent", "50%%", "0.005"},
		{"negative percent", "-50%", "-0.5"},
		{"percent then minus", "10%-3", "-2.9"},
		{"percent then minus spaced", "7 % -3", "-2.93"},
		{"percent then plus", "100+10%", "100.1"},
		{"percent of power", "2^3%", "0.08"},
		{"percent as argument", "max(50%,1%)", "0.5"},
		{"modulo by group", "10 % (3)", "1"},
		{"modulo by constant", "7%e", "1.56343634308"},
		{"modulo by function", "10%sqrt(9)", "1"},
		{"percent then modulo", "50%%3", "0.5"},
		// Numbers, whitespace and names.
		{"leading dot", ".5+.25", "0.75"},
		{"trailing dot", "5.", "5"},
		{"exponent", "1e3", "1000"},
		{"exponent upper case negative", "2.5E-3", "0.0025"},
		{"exponent plus", "1e+2", "100"},
		{"underflow is zero", "1e-400", "0"},
		{"whitespace", "  1 +\t2\n ", "3"},
		{"case-insensitive", "SQRT(16)+PI-Pi", "4"},
		{"constant e", "E", "2.71828182846"},
		{"constant pi symbol", "2*π", "6.28318530718"},
		// Functions.
		{"sqrt", "sqrt(16)", "4"},
		{"abs", "abs(-3.5)", "3.5"},
		{"round half up", "round(2.5)", "3"},
		{"round half away from zero", "round(-2.5)", "-3"},
		{"floor", "floor(-1.5)", "-2"},
		{"ceil", "ceil(1.2)", "2"},
		{"exp", "exp(1)", "2.71828182846"},
		{"ln", "ln(e^2)", "2"},
		{"log", "log(1000)", "3"},
		{"log2", "log2(1024)", "10"},
		{"sin", "sin(pi/2)", "1"},
		{"sin of pi keeps float error", "sin(pi)", "1.22464679915e-16"},
		{"cos", "cos(pi)", "-1"},
		{"tan", "tan(pi/4)", "1"},
		{"asin", "asin(1)", "1.57079632679"},
		{"acos", "acos(1)", "0"},
		{"atan", "atan(1)*4", "3.14159265359"},
		{"min", "min(3,1,2)", "1"},
		{"max", "max(3, 1, 2)", "3"},
		{"max one argument", "max(7)", "7"},
		{"pow", "pow(2,10)", "1024"},
		{"nested calls", "sqrt(pow(3,2)+pow(4,2))", "5"},
		// Formatting through Eval.
		{"float noise hidden", "0.1+0.2", "0.3"},
		{"twelve digits", "2/3", "0.666666666667"},
		{"large exponent form", "1e21", "1e+21"},
		{"twelve digits plain", "999999999999", "999999999999"},
		{"thirteen digits exponent form", "1e12", "1e+12"},
		{"negative zero", "-0", "0"},
		{"negative zero product", "0*-1", "0"},
		{"small", "1/3e9", "3.33333333333e-10"},
		// Limits, at the boundary.
		{"1000 characters", strings.Repeat(" ", 999) + "7", "7"},
		{"1000 multibyte characters", strings.Repeat("−", 999) + "1", "-1"},
		{"depth 64", strings.Repeat("(", 64) + "1" + strings.Repeat(")", 64), "1"},
		{"depth 64 with calls", strings.Repeat("abs(", 64) + "-1" + strings.Repeat(")", 64), "1"},
		{"long chain", strings.Repeat("1+", 499) + "1", "500"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(outcome{Value: tc.want}, evalOutcome(tc.expr)); diff != "" {
				t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	const notFinite = "result is not a finite number"
	tests := []struct {
		name string
		expr string
		want string
	}{
		{"division by zero", "1/0", "division by zero"},
		{"zero by zero", "0/0", "division by zero"},
		{"division by zero group", "1/(2-2)", "division by zero"},
		{"modulo by zero", "5%0", "modulo by zero"},
		{"syntax unexpected paren", "1+2*)", `syntax error at position 5: unexpected ")"`},
		{"syntax extra paren", "(1+2))", `syntax error at position 6: unexpected ")"`},
		{"syntax missing operand", "1+", "syntax error at position 3: unexpected end of expression"},
		{"syntax unclosed", "(1+2", "syntax error at position 5: unexpected end of expression"},
		{"syntax unclosed call", "sqrt(4", "syntax error at position 7: unexpected end of expression"},
		{"syntax two numbers", "2 3", `syntax error at position 3: unexpected "3"`},
		{"syntax implicit product", "2pi", `syntax error at position 2: unexpected "pi"`},
		{"syntax bad character", "1 $ 2", `syntax error at position 3: unexpected "$"`},
		{"syntax double dot", "1..2", `syntax error at position 3: unexpected ".2"`},
		{"syntax lone dot", ".", `syntax error at position 1: unexpected "."`},
		{"syntax comma", "1,000", `syntax error at position 2: unexpected ","`},
		{"syntax leading operator", "*3", `syntax error at position 1: unexpected "*"`},
		{"syntax bare exponent", "1e", `syntax error at position 2: unexpected "e"`},
		{"syntax empty argument", "max(1,)", `syntax error at position 7: unexpected ")"`},
		{"syntax empty parentheses", "()", `syntax error at position 2: unexpected ")"`},
		{"syntax position counts characters", "÷÷", `syntax error at position 1: unexpected "÷"`},
		{"syntax after multibyte", "2×÷3", `syntax error at position 3: unexpected "÷"`},
		{"syntax modulo without left operand", "%5", `syntax error at position 1: unexpected "%"`},
		{"empty", "", "expression is empty"},
		{"blank", " \t\n", "expression is empty"},
		{"unknown function", "foo(1)", `unknown function "foo"`},
		{"unknown identifier", "x+1", `unknown identifier "x" (the constants are pi and e)`},
		{"constant called", "pi(2)", "pi is a constant, not a function"},
		{"function without parentheses", "sqrt 4", "function sqrt needs its arguments in parentheses, as in sqrt(2)"},
		{"too many arguments", "sqrt(1,2)", "sqrt takes 1 argument, got 2"},
		{"no arguments", "SQRT()", "sqrt takes 1 argument, got 0"},
		{"pow one argument", "pow(2)", "pow takes 2 arguments, got 1"},
		{"pow three arguments", "pow(2,3,4)", "pow takes 2 arguments, got 3"},
		{"max no arguments", "max()", "max takes at least 1 argument, got 0"},
		{"min no arguments", "min()", "min takes at least 1 argument, got 0"},
		{"sqrt of negative", "sqrt(-1)", notFinite},
		{"overflow", "1e308*10", notFinite},
		{"overflow in sum", "1e308+1e308", notFinite},
		{"ln of zero", "ln(0)", notFinite},
		{"log of negative", "log(-1)", notFinite},
		{"asin out of domain", "asin(2)", notFinite},
		{"zero to negative power", "0^-1", notFinite},
		{"fractional power of negative", "pow(-8,1/3)", notFinite},
		{"exp overflow", "exp(1000)", notFinite},
		{"intermediate overflow", "1/(1e308*10)", notFinite},
		{"literal out of range", "1e400", "number 1e400 is out of range"},
		{"too long", strings.Repeat(" ", 1000) + "7", "expression is too long: 1001 characters, the limit is 1000"},
		{"too deep", strings.Repeat("(", 65) + "1" + strings.Repeat(")", 65), "expression is nested too deeply: more than 64 levels of parentheses"},
		{"too deep with calls", strings.Repeat("abs(", 65) + "1" + strings.Repeat(")", 65), "expression is nested too deeply: more than 64 levels of parentheses"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(outcome{Err: tc.want}, evalOutcome(tc.expr)); diff != "" {
				t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}

func BenchmarkEval(b *testing.B) {
	benchmarks := []struct {
		name string
		expr string
	}{
		{"simple", "1+2"},
		{"typical", "(1200*1.05^3 - 50)/12"},
		{"functions", "sqrt(pow(3,2)+pow(4,2))*max(1,2,3)+round(ln(e^2))"},
		{"max length", strings.Repeat("1+", 499) + "1"},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Eval(bm.expr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
