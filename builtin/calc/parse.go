package calc

import (
	"fmt"
	"strconv"
	"strings"
)

// parser is a recursive-descent parser over a token slice. The grammar, from
// loosest to tightest binding:
//
//	expr    = term { ("+" | "-") term }
//	term    = factor { ("*" | "/" | "%") factor }
//	factor  = unary { "%" }            // percent: a % not followed by an operand
//	unary   = ("-" | "+") unary | power
//	power   = primary [ "^" unary ]    // right-associative, above unary minus
//	primary = number | name | name "(" [ expr { "," expr } ] ")" | "(" expr ")"
type parser struct {
	toks  []token
	i     int
	depth int // open parentheses around the current position
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// at reports whether the next token is the operator op.
func (p *parser) at(op rune) bool {
	t := p.peek()
	return t.kind == tokOp && t.op == op
}

func (p *parser) parseExpr() (node, error) {
	return p.parseLeft(p.parseTerm, '+', '-')
}

func (p *parser) parseTerm() (node, error) {
	return p.parseLeft(p.parseFactor, '*', '/', '%')
}

// parseLeft parses a left-associative chain of operands joined by ops.
func (p *parser) parseLeft(operand func() (node, error), ops ...rune) (node, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tokOp || !strings.ContainsRune(string(ops), t.op) {
			return left, nil
		}
		p.next()
		right, err := operand()
		if err != nil {
			return nil, err
		}
		left = binary{op: t.op, l: left, r: right}
	}
}

// parseFactor parses an operand with its percent signs. A % that is followed
// by an operand is left for parseTerm, which reads it as modulo.
func (p *parser) parseFactor() (node, error) {
	x, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.at('%') && !startsOperand(p.toks[p.i+1]) {
		p.next()
		x = percent{x: x}
	}
	return x, nil
}

// startsOperand reports whether t can begin an operand. Signs do not count,
// so "10%-3" is 10 percent minus 3.
func startsOperand(t token) bool {
	return t.kind == tokNum || t.kind == tokIdent || t.kind == tokOp && t.op == '('
}

func (p *parser) parseUnary() (node, error) {
	switch {
	case p.at('-'):
		p.next()
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return negate{x: x}, nil
	case p.at('+'):
		p.next()
		return p.parseUnary()
	}
	return p.parsePower()
}

func (p *parser) parsePower() (node, error) {
	base, err := p.parsePrimary()
	if err != nil || !p.at('^') {
		return base, err
	}
	p.next()
	exp, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	return binary{op: '^', l: base, r: exp}, nil
}

func (p *parser) parsePrimary() (node, error) {
	t := p.next()
	switch {
	case t.kind == tokNum:
		return number(t.num), nil
	case t.kind == tokIdent:
		return p.parseName(t)
	case t.kind == tokOp && t.op == '(':
		if err := p.open(); err != nil {
			return nil, err
		}
		x, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		return x, p.close()
	}
	return nil, p.unexpected(t)
}

// open enters a parenthesis whose "(" has been consumed.
func (p *parser) open() error {
	p.depth++
	if p.depth > MaxDepth {
		return fmt.Errorf("expression is nested too deeply: more than %d levels of parentheses", MaxDepth)
	}
	return nil
}

// close consumes the ")" that ends the innermost parenthesis.
func (p *parser) close() error {
	if t := p.next(); t.kind != tokOp || t.op != ')' {
		return p.unexpected(t)
	}
	p.depth--
	return nil
}

func (p *parser) unexpected(t token) error {
	if t.kind == tokEOF {
		return syntaxError(t.pos, "end of expression")
	}
	return syntaxError(t.pos, strconv.Quote(t.text))
}
