package calc

import (
	"fmt"
	"strconv"
	"unicode"
)

// kind classifies a token.
type kind int

const (
	tokEOF kind = iota
	tokNum
	tokIdent
	tokOp // one of + - * / ^ % ( ) , in canonical ASCII form
)

// token is one lexical unit. pos is the 1-based character (rune) position of
// its first character, as the model counts it in error messages.
type token struct {
	kind kind
	text string  // as written, for error messages
	op   rune    // canonical operator, for tokOp
	num  float64 // value, for tokNum
	pos  int
}

// lex splits src into tokens ending with a tokEOF. It fails on a character
// that cannot start a token and on a number literal that overflows float64.
func lex(src []rune) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			t, err := lexNumber(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += len([]rune(t.text))
		case unicode.IsLetter(c):
			j := i + 1
			for j < len(src) && (unicode.IsLetter(src[j]) || isDigit(src[j]) || src[j] == '_') {
				j++
			}
			toks = append(toks, token{kind: tokIdent, text: string(src[i:j]), pos: i + 1})
			i = j
		default:
			op, ok := operator(c)
			if !ok {
				return nil, syntaxError(i+1, strconv.Quote(string(c)))
			}
			toks = append(toks, token{kind: tokOp, text: string(c), op: op, pos: i + 1})
			i++
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(src) + 1}), nil
}

// lexNumber reads a decimal literal at src[i]: digits with an optional
// fraction (".5" and "5." included) and an optional exponent ("1e3", "2E-4").
// An "e" not followed by digits is left for the next token.
func lexNumber(src []rune, i int) (token, error) {
	j := skipDigits(src, i)
	if j < len(src) && src[j] == '.' {
		j = skipDigits(src, j+1)
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			j = skipDigits(src, k)
		}
	}
	text := string(src[i:j])
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return token{}, fmt.Errorf("number %s is out of range", text)
	}
	return token{kind: tokNum, text: text, num: v, pos: i + 1}, nil
}

func skipDigits(src []rune, i int) int {
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	return i
}

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

// operator maps an operator character, including the Unicode forms the model
// may copy from prose (× ÷ −), to its ASCII form.
func operator(c rune) (rune, bool) {
	switch c {
	case '+', '-', '*', '/', '^', '%', '(', ')', ',':
		return c, true
	case '×':
		return '*', true
	case '÷':
		return '/', true
	case '−':
		return '-', true
	}
	return 0, false
}

// syntaxError reports an unexpected token; what is already quoted, or a
// phrase such as "end of expression".
func syntaxError(pos int, what string) error {
	return fmt.Errorf("syntax error at position %d: unexpected %s", pos, what)
}
