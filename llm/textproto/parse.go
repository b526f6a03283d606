package textproto

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/quiverhq/quiver/llm"
)

// piece is one thing the parser found in a reply: text, or a call.
type piece struct {
	text   string
	isCall bool
	call   llm.ToolCall
	// raw is how many input bytes the call was read from.
	raw int
}

// parser reads calls out of a streamed reply. Text outside blocks comes
// out as soon as it cannot be the start of a tag; a block comes out whole,
// as a call, as text, or not at all. Not safe for concurrent use.
type parser struct {
	names names
	buf   []byte // input not yet given out
	open  string // the opening tag of the block in progress; "" outside one
	from  int    // in a block: where in buf its end may start
	n     int    // calls given out so far
}

func newParser(declared []string) *parser {
	return &parser{names: newNames(declared)}
}

// feed adds a delta of the reply and returns what it completes.
func (p *parser) feed(s string) []piece {
	p.buf = append(p.buf, s...)
	return p.drain(false)
}

// flush ends the reply: it returns everything still held, recovering or
// dropping an unterminated block. The parser may be fed again afterwards;
// call IDs keep counting.
func (p *parser) flush() []piece {
	return p.drain(true)
}

func (p *parser) drain(final bool) []piece {
	var out []piece
	more := true
	for more {
		if p.open == "" {
			out, more = p.outside(out, final)
		} else {
			out, more = p.inside(out, final)
		}
	}
	return out
}

// outside gives out text up to the next opening tag and enters its block.
// A possible partial tag at the end is held back until more input comes.
func (p *parser) outside(out []piece, final bool) ([]piece, bool) {
	i, n, m := findTag(p.buf, 0, false)
	switch {
	case m == full:
		out = p.text(out, i)
		p.open, p.buf, p.from = string(p.buf[:n]), p.buf[n:], 0
		return out, true
	case m == partial && !final:
		return p.text(out, i), false
	}
	return p.text(out, len(p.buf)), false
}

// inside handles the block in progress: its body is either not a call
// (then the tag is text), or ends at a closing tag, at the next opening
// tag, or at the end of the reply.
func (p *parser) inside(out []piece, final bool) ([]piece, bool) {
	switch callStart(p.buf) {
	case none:
		out = append(out, piece{text: p.open})
		p.open = ""
		return out, true
	case partial:
		if final {
			p.drop(len(p.buf))
		}
		return out, final
	}
	end, n, closed := p.blockEnd()
	switch {
	case closed:
		return p.closedBlock(out, end, n), true
	case end >= 0:
		return p.cutBlock(out, end), true
	case final:
		return p.cutBlock(out, len(p.buf)), false
	}
	return out, false
}

// blockEnd finds the first closing or opening tag after the block's start.
// end is -1 when neither has fully arrived; the search then resumes where
// a partial tag begins, so a long block is scanned once.
func (p *parser) blockEnd() (end, n int, closed bool) {
	ci, cn, cm := findTag(p.buf, p.from, true)
	oi, on, om := findTag(p.buf, p.from, false)
	switch {
	case cm == full && (om != full || ci < oi):
		return ci, cn, true
	case om == full:
		return oi, on, false
	}
	p.from = len(p.buf)
	if cm == partial {
		p.from = ci
	}
	if om == partial && oi < p.from {
		p.from = oi
	}
	return -1, 0, false
}

// closedBlock gives out a complete block as a call, or as text when its
// body holds none.
func (p *parser) closedBlock(out []piece, end, n int) []piece {
	raw := len(p.open) + end + n
	if c, ok := p.decode(p.buf[:end]); ok {
		out = append(out, piece{isCall: true, call: c, raw: raw})
	} else {
		out = append(out, piece{text: p.open + string(p.buf[:end+n])})
	}
	p.open, p.buf = "", p.buf[end+n:]
	return out
}

// cutBlock gives out an unterminated block as a call when it can be
// recovered, and drops it otherwise.
func (p *parser) cutBlock(out []piece, end int) []piece {
	if c, ok := p.decode(p.buf[:end]); ok {
		out = append(out, piece{isCall: true, call: c, raw: len(p.open) + end})
	}
	p.drop(end)
	return out
}

func (p *parser) drop(end int) {
	p.open, p.buf = "", p.buf[end:]
}

// text gives out buf[:i] as text.
func (p *parser) text(out []piece, i int) []piece {
	if i > 0 {
		out = append(out, piece{text: string(p.buf[:i])})
		p.buf = p.buf[i:]
	}
	return out
}

// decode reads a call from a block's body and numbers it.
func (p *parser) decode(body []byte) (llm.ToolCall, bool) {
	name, args, ok := decodeCall(body)
	if !ok {
		return llm.ToolCall{}, false
	}
	p.n++
	return llm.ToolCall{ID: "call_" + strconv.Itoa(p.n), Name: p.names.resolve(name), Args: args}, true
}

// names resolves the names a model writes to the declared ones.
type names struct {
	declared map[string]bool
	loose    map[string]string // normalised name → declared name
}

func newNames(declared []string) names {
	ns := names{declared: make(map[string]bool, len(declared)), loose: make(map[string]string, len(declared))}
	for _, d := range declared {
		ns.declared[d] = true
		if _, dup := ns.loose[normalise(d)]; !dup {
			ns.loose[normalise(d)] = d
		}
	}
	return ns
}

// resolve returns the declared name name stands for, or name itself when
// it stands for none (dispatch then refuses it as an unknown tool).
func (ns names) resolve(name string) string {
	if ns.declared[name] {
		return name
	}
	if d, ok := ns.loose[normalise(name)]; ok {
		return d
	}
	return name
}

// normalise folds the differences models make in tool names: case,
// surrounding space, "-" for "_".
func normalise(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
}

// match is how much of a pattern the input holds.
type match int

const (
	none    match = iota
	partial       // the input ends before the pattern could be decided
	full
)

// callStart reports whether a block's body starts like a call: some
// whitespace, an optional ``` fence with its language, then "{". The
// whitespace is bounded so that a tag followed by pages of blanks is
// decided (as text) without rescanning them on every delta.
func callStart(body []byte) match {
	s := scanner{b: body, m: full}
	s.space(maxLead)
	if s.m == full && s.i < len(body) && body[s.i] == '`' {
		s.lit("```")
		s.word(32)
		s.space(maxLead)
	}
	s.lit("{")
	return s.m
}

// maxLead is the whitespace a call's body may start with, at each gap.
const maxLead = 256

// maxSpace is the whitespace a tag may hold at each gap: models write
// "< tool_call >" and "<tool_call\n>", never a page of blanks.
const maxSpace = 8

// findTag finds the first tool_call tag (the closing one when closing is
// set) in b at or after from: its start, its length, and whether it is
// complete or cut off by the end of b.
func findTag(b []byte, from int, closing bool) (int, int, match) {
	for i := from; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			break
		}
		i += j
		if n, m := matchTag(b[i:], closing); m != none {
			return i, n, m
		}
	}
	return -1, 0, none
}

// matchTag matches a tag at the start of b: "<", "/" when closing,
// "tool_call" in any case, ">", with some whitespace at each gap.
func matchTag(b []byte, closing bool) (int, match) {
	s := scanner{b: b, m: full}
	s.lit("<")
	s.space(maxSpace)
	if closing {
		s.lit("/")
		s.space(maxSpace)
	}
	s.lit("tool_call")
	s.space(maxSpace)
	s.lit(">")
	return s.i, s.m
}

// scanner matches a pattern step by step; m turns partial when the input
// runs out and none on a mismatch, after which steps do nothing.
type scanner struct {
	b []byte
	i int
	m match
}

// lit matches w, ASCII case-insensitively.
func (s *scanner) lit(w string) {
	for j := 0; j < len(w) && s.m == full; j++ {
		switch {
		case s.i == len(s.b):
			s.m = partial
		case lower(s.b[s.i]) != w[j]:
			s.m = none
		default:
			s.i++
		}
	}
}

// space skips up to max whitespace bytes.
func (s *scanner) space(max int) {
	for n := 0; s.m == full && n != max; n++ {
		if s.i == len(s.b) {
			s.m = partial
			return
		}
		if !isSpace(s.b[s.i]) {
			return
		}
		s.i++
	}
}

// word skips up to max letters, digits, "_", "-" and "+" (a fence's
// language).
func (s *scanner) word(max int) {
	for n := 0; s.m == full && n < max; n++ {
		if s.i == len(s.b) {
			s.m = partial
			return
		}
		c := lower(s.b[s.i])
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '+') {
			return
		}
		s.i++
	}
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
