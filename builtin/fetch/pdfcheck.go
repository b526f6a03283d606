package fetch

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"regexp"
	"strconv"
)

// The PDF parser survives most damage by panicking, which pdfText
// recovers. A few shapes of file do worse: they make it allocate memory
// sized by a number in the file, or recurse without end (a stack overflow
// ends the process; recover cannot catch it). checkPDF looks for those
// shapes in the raw bytes before the parser sees them.

// Limits checkPDF enforces.
const (
	// maxPDFObjects bounds the objects a cross-reference section may claim.
	maxPDFObjects = 10_000_000
	// maxPDFColumns bounds a predictor's /Columns, which sizes a row buffer.
	maxPDFColumns = 1 << 16
	// maxXrefStream bounds the decompressed size of one cross-reference
	// stream checkPDF reads.
	maxXrefStream = 64 << 20
	// dictLookback is how far before "stream" a stream's dictionary is
	// looked for, and maxPDFStreams how many streams a file may have: the
	// check reads each dictionary.
	dictLookback  = 2048
	maxPDFStreams = 50_000
)

// errPDFShape is checkPDF's answer for a file the parser must not see.
var errPDFShape = errors.New("pdf: file has a shape the parser cannot read safely")

var (
	nameEscape  = regexp.MustCompile(`#[0-9A-Fa-f]{2}`)
	xrefType    = regexp.MustCompile(`/Type\s*/XRef\b`)
	sizeKey     = regexp.MustCompile(`/Size\s+(\d+)`)
	columnsKey  = regexp.MustCompile(`/Columns\s+(\d+)`)
	predictor   = regexp.MustCompile(`/Predictor\s+(\d+)`)
	wKey        = regexp.MustCompile(`/W\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s*\]`)
	indexKey    = regexp.MustCompile(`/Index\s*\[([\d\s]*)\]`)
	filterKey   = regexp.MustCompile(`/Filter\s*(/\w+|\[)`)
	xrefKeyword = regexp.MustCompile(`(?:^|[^A-Za-z])xref\s`)
	streamStart = regexp.MustCompile(`>>\s*stream\r?\n`)
)

// checkPDF returns errPDFShape when body has a cross-reference section
// that claims too many objects, a predictor row too wide, or an object
// stream held inside an object stream (forbidden by the format, and the
// parser follows such a chain without end).
func checkPDF(body []byte) error {
	if !plausibleTables(body) {
		return errPDFShape
	}
	inStream := map[int64]int64{} // object number -> the object stream holding it
	streams := streamStart.FindAllIndex(body, maxPDFStreams+1)
	if len(streams) > maxPDFStreams {
		return errPDFShape
	}
	for _, loc := range streams {
		dict := streamDict(body, loc[0])
		if !plausibleNumbers(dict) {
			return errPDFShape
		}
		if xrefType.Match(dict) && !readXrefStream(dict, body[loc[1]:], inStream) {
			return errPDFShape
		}
	}
	for _, holder := range inStream {
		if _, nested := inStream[holder]; nested {
			return errPDFShape
		}
	}
	return nil
}

// streamDict returns the dictionary that ends at end (the ">>" before
// "stream"), with name escapes (#xx) decoded as the parser decodes them.
func streamDict(body []byte, end int) []byte {
	start := max(end-dictLookback, 0)
	if i := bytes.LastIndex(body[start:end], []byte("obj")); i >= 0 {
		start += i
	}
	dict := body[start : end+2]
	if bytes.IndexByte(dict, '#') >= 0 {
		dict = nameEscape.ReplaceAllFunc(dict, func(m []byte) []byte {
			b, _ := strconv.ParseUint(string(m[1:]), 16, 8)
			return []byte{byte(b)}
		})
	}
	return dict
}

// plausibleNumbers reports that a stream dictionary's /Size, /Columns and
// /W, which size the parser's allocations, are within bounds.
func plausibleNumbers(dict []byte) bool {
	for _, m := range sizeKey.FindAllSubmatch(dict, -1) {
		if n, err := strconv.ParseInt(string(m[1]), 10, 64); err != nil || n > maxPDFObjects {
			return false
		}
	}
	for _, m := range columnsKey.FindAllSubmatch(dict, -1) {
		if n, err := strconv.ParseInt(string(m[1]), 10, 64); err != nil || n > maxPDFColumns {
			return false
		}
	}
	if m := wKey.FindSubmatch(dict); m != nil {
		for _, w := range m[1:] {
			if n, err := strconv.Atoi(string(w)); err != nil || n > 8 {
				return false
			}
		}
	}
	if m := indexKey.FindSubmatch(dict); m != nil {
		nums := bytes.Fields(m[1])
		for i := 0; i+1 < len(nums); i += 2 {
			start, err1 := strconv.ParseInt(string(nums[i]), 10, 64)
			n, err2 := strconv.ParseInt(string(nums[i+1]), 10, 64)
			if err1 != nil || err2 != nil || start+n > maxPDFObjects {
				return false
			}
		}
	}
	return true
}

// plausibleTables reports that every classic cross-reference table's
// subsections ("start count" lines) stay within maxPDFObjects: the parser
// sizes its table from them.
func plausibleTables(body []byte) bool {
	for _, loc := range xrefKeyword.FindAllIndex(body, -1) {
		rest := body[loc[1]:]
		for {
			start, ok1 := nextInt(&rest)
			n, ok2 := nextInt(&rest)
			if !ok1 || !ok2 {
				break // "trailer", or not a table
			}
			if start < 0 || n < 0 || start+n > maxPDFObjects {
				return false
			}
			for range 3 * n {
				nextToken(&rest)
			}
		}
	}
	return true
}

// nextToken returns the next whitespace-separated token of *b and moves
// *b past it.
func nextToken(b *[]byte) []byte {
	s := bytes.TrimLeft(*b, " \t\r\n\f\x00")
	end := bytes.IndexAny(s, " \t\r\n\f\x00")
	if end < 0 {
		end = len(s)
	}
	*b = s[end:]
	return s[:end]
}

// nextInt reads the next token of *b as an integer.
func nextInt(b *[]byte) (int64, bool) {
	n, err := strconv.ParseInt(string(nextToken(b)), 10, 64)
	return n, err == nil
}

// readXrefStream adds the compressed-object entries (type 2) of the
// cross-reference stream with dictionary dict and data at data to
// inStream. It returns false when the stream cannot be read the way the
// parser would read it, so that nothing unchecked reaches the parser.
func readXrefStream(dict, data []byte, inStream map[int64]int64) bool {
	w := wKey.FindSubmatch(dict)
	if w == nil {
		return true // the parser refuses it
	}
	var widths [3]int
	for i := range widths {
		widths[i], _ = strconv.Atoi(string(w[i+1]))
	}
	raw, ok := xrefStreamData(dict, data)
	if !ok {
		return false
	}
	index := []int64{0, 0}
	if m := sizeKey.FindSubmatch(dict); m != nil {
		index[1], _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := indexKey.FindSubmatch(dict); m != nil {
		index = index[:0]
		for _, f := range bytes.Fields(m[1]) {
			n, _ := strconv.ParseInt(string(f), 10, 64)
			index = append(index, n)
		}
	}
	row := widths[0] + widths[1] + widths[2]
	for i := 0; i+1 < len(index); i += 2 {
		for n := int64(0); n < index[i+1] && len(raw) >= row && row > 0; n++ {
			kind := int64(1)
			if widths[0] > 0 {
				kind = field(raw[:widths[0]])
			}
			if kind == 2 {
				inStream[index[i]+n] = field(raw[widths[0] : widths[0]+widths[1]])
			}
			raw = raw[row:]
		}
	}
	return true
}

// xrefStreamData decompresses a cross-reference stream's data and undoes
// its PNG Up predictor. ok is false for a filter or predictor the check
// does not read.
func xrefStreamData(dict, data []byte) (out []byte, ok bool) {
	var r io.Reader = bytes.NewReader(data)
	if m := filterKey.FindSubmatch(dict); m != nil {
		if string(m[1]) != "/FlateDecode" {
			return nil, false
		}
		zr, err := zlib.NewReader(r)
		if err != nil {
			return nil, true // the parser fails on it too
		}
		r = zr
	}
	out, _ = io.ReadAll(io.LimitReader(r, maxXrefStream+1))
	if len(out) > maxXrefStream {
		return nil, false
	}
	p := predictor.FindSubmatch(dict)
	if p == nil || string(p[1]) == "1" {
		return out, true
	}
	columns := 1
	if m := columnsKey.FindSubmatch(dict); m != nil {
		columns, _ = strconv.Atoi(string(m[1]))
	}
	return pngUp(out, columns), true
}

// pngUp undoes the PNG Up predictor row by row, stopping, as the parser
// does, at a row with another filter.
func pngUp(in []byte, columns int) []byte {
	prev := make([]byte, columns)
	var out []byte
	for len(in) >= columns+1 && in[0] == 2 {
		for i := range columns {
			prev[i] += in[1+i]
		}
		out = append(out, prev...)
		in = in[columns+1:]
	}
	return out
}

// field decodes a big-endian cross-reference field.
func field(b []byte) int64 {
	var x int64
	for _, c := range b {
		x = x<<8 | int64(c)
	}
	return x
}

// lexCheck follows the parser's tokenizer over a content stream or font map
// far enough to tell whether the stream ends inside a hex string: there
// the parser reads end-of-stream as white space and loops for ever. It
// tracks comments, literal strings (nesting and escapes), names (#xx
// escapes) and hex strings (pairs of digits, ended by a '>' where a pair
// would start). Where the parser gives up a token half-way (a bad escape,
// a bad hex pair) it carries on after the bytes it consumed, in plain
// text, and so does lexCheck.
type lexCheck struct {
	mode   lexMode
	depth  int  // literal string nesting
	esc    int  // escape bytes still to come: after '\' in a string, '#' in a name
	octal  int  // value of an octal escape so far
	bad    bool // the escape or hex pair so far is malformed
	lt     bool // a '<' was read in plain text: "<<" or a hex string
	second bool // a hex string's next digit is the second of a pair
}

type lexMode int

const (
	lexPlain lexMode = iota
	lexComment
	lexLiteral
	lexName
	lexHex
)

// Write feeds the next bytes of the stream; it never fails.
func (l *lexCheck) Write(p []byte) (int, error) {
	for _, c := range p {
		l.step(c)
	}
	return len(p), nil
}

func (l *lexCheck) step(c byte) {
	switch l.mode {
	case lexComment:
		if c == '\r' || c == '\n' {
			l.mode = lexPlain
		}
	case lexLiteral:
		l.literal(c)
	case lexName:
		l.name(c)
	case lexHex:
		l.hex(c)
	default:
		l.plain(c)
	}
}

func (l *lexCheck) plain(c byte) {
	if l.lt {
		l.lt = false
		if c == '<' {
			return
		}
		l.mode, l.second = lexHex, false
		l.hex(c)
		return
	}
	switch c {
	case '%':
		l.mode = lexComment
	case '(':
		l.mode, l.depth, l.esc = lexLiteral, 1, 0
	case '/':
		l.mode, l.esc = lexName, 0
	case '<':
		l.lt = true
	}
}

// literal mirrors the parser's literal strings: nested parentheses, and
// escapes of one known letter or up to three octal digits; any other
// escape, or an octal value over 255, makes the parser give the string up.
func (l *lexCheck) literal(c byte) {
	switch {
	case l.esc == 1 && isOctal(c):
		l.esc, l.octal = 3, int(c-'0')
	case l.esc == 1:
		l.esc = 0
		if bytes.IndexByte([]byte("nrbtf()\\\r\n"), c) < 0 {
			l.mode = lexPlain
		}
	case l.esc > 1 && isOctal(c):
		l.esc--
		if l.octal = l.octal*8 + int(c-'0'); l.esc == 1 {
			l.esc = 0
			l.octalDone()
		}
	case l.esc > 1:
		l.esc = 0
		if l.octalDone(); l.mode == lexLiteral {
			l.literal(c)
		}
	case c == '\\':
		l.esc = 1
	case c == '(':
		l.depth++
	case c == ')':
		if l.depth--; l.depth == 0 {
			l.mode = lexPlain
		}
	}
}

func (l *lexCheck) octalDone() {
	if l.octal > 255 {
		l.mode = lexPlain
	}
}

// name mirrors the parser's names, which end at white space or a
// delimiter; a '#' takes the next two bytes as hex digits, and when they
// are not, the parser gives the name up after them.
func (l *lexCheck) name(c byte) {
	switch {
	case l.esc > 0:
		l.bad = l.bad || !isHex(c)
		if l.esc--; l.esc == 0 && l.bad {
			l.mode = lexPlain
		}
	case c == '#':
		l.esc, l.bad = 2, false
	case isPDFSpace(c) || isPDFDelim(c):
		l.mode = lexPlain
		l.plain(c)
	}
}

// hex mirrors the parser's hex-string loop: a '>' ends the string only
// where a pair would start, white space is skipped, and any other byte
// completes a pair; a pair that is not two hex digits makes the parser
// give up the string, and reading resumes after it.
func (l *lexCheck) hex(c byte) {
	switch {
	case isPDFSpace(c):
	case !l.second && c == '>':
		l.mode = lexPlain
	case !l.second:
		l.second, l.bad = true, !isHex(c)
	default:
		l.second = false
		if l.bad || !isHex(c) {
			l.mode = lexPlain
		}
	}
}

// hangs reports that the stream ended inside a hex string, or just after
// a '<' that would start one.
func (l *lexCheck) hangs() bool { return l.mode == lexHex || l.lt }

func isPDFSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func isPDFDelim(c byte) bool { return bytes.IndexByte([]byte("<>()[]{}/%"), c) >= 0 }

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
