package fetch

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"
)

// The parser's own page text (Page.GetPlainText) ignores where glyphs are
// drawn, so text typeset by TeX, which spaces words by moving the pen rather
// than drawing a space, comes out as "Thismanualisfor…". This file runs the
// page's content stream itself, tracks the text position, and puts a space
// where the pen jumps forward and a line break where it moves to another
// line.

// Layout thresholds, as fractions of the font size.
const (
	// wordGap is the smallest forward jump read as a space: word spaces
	// are a quarter to a third of an em, kerning a tenth at most.
	wordGap = 0.15
	// lineShift is the smallest vertical move read as a new line; sub- and
	// superscripts move less.
	lineShift = 0.5
	// paragraphShift is the vertical move read as a blank line.
	paragraphShift = 2.0
	// maxCIDWidths bounds the widths kept for one composite font.
	maxCIDWidths = 1 << 16
)

// layoutPage returns the text of one page dictionary, lines as the page
// lays them out. Font maps are parsed once per document through fonts;
// the work is charged to budget, and errPDFBudget is returned once it is
// spent. A page whose content fails half-way keeps the text read before
// the failure; one that yields none returns the error.
func layoutPage(page pdf.Value, fonts fontCache, budget *pdfBudget) (text string, err error) {
	contents := page.Key("Contents")
	if contents.Kind() == pdf.Null {
		return "", nil
	}
	if err := charge(contents, budget); err != nil {
		return "", err
	}
	in := &interp{
		g:      gstate{ctm: identity, scale: 1},
		tm:     identity,
		tlm:    identity,
		fonts:  fonts,
		page:   map[string]*pdfFont{},
		res:    resources(page).Key("Font"),
		budget: budget,
	}
	defer func() {
		if x := recover(); x != nil {
			text, err = in.out.b.String(), nil
			if in.err != nil || strings.TrimSpace(text) == "" {
				text, err = "", errors.Join(in.err, fmt.Errorf("pdf: content: %v", x))
			}
		}
	}()
	pdf.Interpret(contents, in.op)
	return in.out.b.String(), in.err
}

// resources returns the page's resource dictionary, inherited from an
// ancestor in the page tree when the page has none.
func resources(page pdf.Value) pdf.Value {
	for v, depth := page, 0; v.Kind() == pdf.Dict && depth <= maxPDFTreeDepth; v, depth = v.Key("Parent"), depth+1 {
		if r := v.Key("Resources"); r.Kind() == pdf.Dict {
			return r
		}
	}
	return pdf.Value{}
}

// charge subtracts the decompressed size of stream v (or of an array of
// streams, read as one) from budget, reading no more than the budget
// allows, and checks that the parser can tokenize it without hanging. Read
// errors are left to the interpreter, which meets them again.
func charge(v pdf.Value, budget *pdfBudget) error {
	streams := []pdf.Value{v}
	if v.Kind() == pdf.Array {
		streams = streams[:0]
		for i := 0; i < v.Len(); i++ {
			streams = append(streams, v.Index(i))
		}
	}
	var lex lexCheck
	for _, s := range streams {
		if s.Kind() != pdf.Stream {
			continue
		}
		if !plausibleParams(s.Key("DecodeParms")) {
			return errPDFShape
		}
		n, _ := io.Copy(&lex, io.LimitReader(s.Reader(), budget.content+1))
		budget.content -= n
		if budget.content < 0 {
			return errPDFBudget
		}
	}
	if lex.hangs() {
		return errPDFShape
	}
	return nil
}

// plausibleParams reports that a stream's decode parameters (a dictionary,
// or an array of them) give no predictor row wider than maxPDFColumns: the
// parser allocates the row before reading a byte.
func plausibleParams(p pdf.Value) bool {
	if p.Kind() == pdf.Array {
		for i := 0; i < p.Len(); i++ {
			if !plausibleParams(p.Index(i)) {
				return false
			}
		}
		return true
	}
	return p.Key("Columns").Int64() <= maxPDFColumns
}

// matrix is an affine transform [a b c d e f] as PDF writes it; points are
// row vectors, so m.mul(n) applies m first.
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m matrix) apply(x, y float64) (float64, float64) {
	return x*m[0] + y*m[2] + m[4], x*m[1] + y*m[3] + m[5]
}

func translate(x, y float64) matrix { return matrix{1, 0, 0, 1, x, y} }

// gstate is the part of the graphics state that text placement needs;
// q and Q save and restore it.
type gstate struct {
	ctm                                              matrix
	font                                             *pdfFont
	size, charSpace, wordSpace, scale, leading, rise float64
}

// interp runs one page's content stream.
type interp struct {
	g       gstate
	saved   []gstate
	tm, tlm matrix
	fonts   fontCache
	page    map[string]*pdfFont // this page's fonts by resource name
	res     pdf.Value           // the page's Font resources
	budget  *pdfBudget
	out     lineWriter
	err     error
}

// op applies one operator with its operands; it is pdf.Interpret's callback.
func (in *interp) op(stk *pdf.Stack, op string) {
	args := make([]pdf.Value, stk.Len())
	for i := len(args) - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	if in.err != nil {
		return
	}
	switch op {
	case "q":
		in.saved = append(in.saved, in.g)
	case "Q":
		if n := len(in.saved); n > 0 {
			in.g, in.saved = in.saved[n-1], in.saved[:n-1]
		}
	case "cm":
		if m, ok := matrixArg(args); ok {
			in.g.ctm = m.mul(in.g.ctm)
		}
	case "BT":
		in.tm, in.tlm = identity, identity
	case "Tm":
		if m, ok := matrixArg(args); ok {
			in.tm, in.tlm = m, m
		}
	case "Tf":
		if len(args) == 2 {
			in.g.font, in.g.size = in.font(args[0].Name()), args[1].Float64()
		}
	default:
		in.textOp(op, args)
	}
}

// textOp applies the text-state, positioning and showing operators.
func (in *interp) textOp(op string, args []pdf.Value) {
	num := func(i int) float64 {
		if i < len(args) {
			return args[i].Float64()
		}
		return 0
	}
	switch op {
	case "Tc":
		in.g.charSpace = num(0)
	case "Tw":
		in.g.wordSpace = num(0)
	case "Tz":
		in.g.scale = num(0) / 100
	case "TL":
		in.g.leading = num(0)
	case "Ts":
		in.g.rise = num(0)
	case "Td":
		in.moveLine(num(0), num(1))
	case "TD":
		in.g.leading = -num(1)
		in.moveLine(num(0), num(1))
	case "T*":
		in.moveLine(0, -in.g.leading)
	case "'":
		in.moveLine(0, -in.g.leading)
		in.showLast(args)
	case "\"":
		in.g.wordSpace, in.g.charSpace = num(0), num(1)
		in.moveLine(0, -in.g.leading)
		in.showLast(args)
	case "Tj":
		in.showLast(args)
	case "TJ":
		if len(args) == 0 {
			return
		}
		a := args[len(args)-1]
		for i := 0; i < a.Len(); i++ {
			if x := a.Index(i); x.Kind() == pdf.String {
				in.show(x.RawString())
			} else {
				in.tm = translate(-x.Float64()/1000*in.g.size*in.g.scale, 0).mul(in.tm)
			}
		}
	}
}

func (in *interp) moveLine(x, y float64) {
	in.tlm = translate(x, y).mul(in.tlm)
	in.tm = in.tlm
}

func (in *interp) showLast(args []pdf.Value) {
	if n := len(args); n > 0 && args[n-1].Kind() == pdf.String {
		in.show(args[n-1].RawString())
	}
}

// show draws raw in the current font: it records the text at the pen's
// position and advances the pen by the glyphs' widths.
func (in *interp) show(raw string) {
	f := in.g.font
	if f == nil {
		f = &unknownFont
	}
	trm := in.tm.mul(in.g.ctm)
	x0, y0 := trm.apply(0, in.g.rise)
	advance := 0.0
	for _, code := range f.codes(raw) {
		w := f.width(code)/1000*in.g.size + in.g.charSpace
		if !f.composite && code == ' ' {
			w += in.g.wordSpace
		}
		advance += w * in.g.scale
	}
	in.tm = translate(advance, 0).mul(in.tm)
	x1, _ := in.tm.mul(in.g.ctm).apply(0, in.g.rise)
	size := in.g.size * math.Hypot(trm[2], trm[3])
	if in.budget.decode -= int64(len(raw)) * f.cost; in.budget.decode < 0 {
		in.err = errPDFBudget
		return
	}
	in.out.add(x0, y0, x1, size, clean(f.enc.Decode(raw)))
}

// font returns the font the page names name, loading it on first use.
func (in *interp) font(name string) *pdfFont {
	if f, ok := in.page[name]; ok {
		return f
	}
	v := in.res.Key(name)
	key := name + "\x00" + v.Key("BaseFont").Name()
	f, ok := in.fonts[key]
	if !ok {
		var err error
		if f, err = loadFont(v, in.budget); err != nil {
			in.err = err
			f = &unknownFont
		}
		in.fonts[key] = f
	}
	in.page[name] = f
	return f
}

func matrixArg(args []pdf.Value) (matrix, bool) {
	var m matrix
	if len(args) != 6 {
		return m, false
	}
	for i := range m {
		m[i] = args[i].Float64()
	}
	return m, true
}

// clean drops control characters, which fonts without a usable encoding
// pass through from the raw codes.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// lineWriter assembles shown text into lines from where it is drawn.
type lineWriter struct {
	b       strings.Builder
	x, y    float64 // end of the last text drawn, and its baseline
	size    float64 // its font size
	started bool
}

// add records s, drawn from (x0, y0) to x1 at font size size: on a new line
// when the baseline moved by half a line or more (a blank line when by two),
// after a space when the pen jumped forward by more than a word gap.
func (w *lineWriter) add(x0, y0, x1, size float64, s string) {
	if s == "" || w.b.Len() > maxPDFText {
		return
	}
	size = max(math.Abs(size), 1)
	if w.started {
		lh := max(size, w.size)
		switch dy := math.Abs(y0 - w.y); {
		case dy > paragraphShift*lh:
			w.b.WriteString("\n\n")
		case dy > lineShift*lh:
			w.b.WriteByte('\n')
		case x0-w.x > wordGap*lh && !w.endsInSpace() && !strings.HasPrefix(s, " "):
			w.b.WriteByte(' ')
		}
	}
	w.b.WriteString(s)
	w.x, w.y, w.size, w.started = x1, y0, size, true
}

func (w *lineWriter) endsInSpace() bool {
	s := w.b.String()
	return s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\n')
}

// fontCache keeps the fonts read so far, by resource name and base font,
// so that a font's maps are parsed once per document rather than per page.
type fontCache map[string]*pdfFont

// pdfFont is what text extraction needs of a font: how its codes map to
// text and how far each one moves the pen.
type pdfFont struct {
	enc pdf.TextEncoding
	// composite marks a Type0 font, whose codes are two bytes.
	composite bool
	// first and widths are a simple font's FirstChar and Widths.
	first  int
	widths []float64
	// cidWidths and defaultWidth are a composite font's W and DW; for a
	// simple font defaultWidth stands in for widths it does not give.
	cidWidths    map[int]float64
	defaultWidth float64
	// cost is the decode work per byte shown: the parser looks a code up
	// by walking the font's map (a ToUnicode stream of about 16 bytes an
	// entry) or its Differences array from the start.
	cost int64
}

// unknownFont stands in for text shown with no font or an unreadable one.
var unknownFont = pdfFont{enc: rawText{}, defaultWidth: 500, cost: 1}

// rawText passes codes through as text.
type rawText struct{}

func (rawText) Decode(raw string) string { return raw }

// loadFont reads the font dictionary v, charging its ToUnicode map to
// budget before the parser reads it.
func loadFont(v pdf.Value, budget *pdfBudget) (*pdfFont, error) {
	if v.Kind() != pdf.Dict {
		return &unknownFont, nil
	}
	toUnicode := v.Key("ToUnicode")
	before := budget.content
	if err := charge(toUnicode, budget); err != nil {
		return nil, err
	}
	pf := pdf.Font{V: v}
	f := &pdfFont{enc: pf.Encoder(), defaultWidth: 500, cost: 1}
	if f.enc == nil {
		f.enc = rawText{}
	}
	switch enc := v.Key("Encoding"); {
	case enc.Kind() == pdf.Dict:
		f.cost += int64(enc.Key("Differences").Len())
	case toUnicode.Kind() == pdf.Stream:
		f.cost += (before - budget.content) / 16
	}
	if v.Key("Subtype").Name() == "Type0" {
		d := v.Key("DescendantFonts").Index(0)
		f.composite, f.defaultWidth = true, 1000
		if dw := d.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.defaultWidth = dw.Float64()
		}
		f.cidWidths = cidWidths(d.Key("W"))
		return f, nil
	}
	f.first = int(v.Key("FirstChar").Int64())
	w := v.Key("Widths")
	for i := 0; i < min(w.Len(), 256); i++ {
		f.widths = append(f.widths, w.Index(i).Float64())
	}
	return f, nil
}

// cidWidths reads a composite font's W array: runs "c [w1 w2 …]" and
// ranges "cFirst cLast w".
func cidWidths(w pdf.Value) map[int]float64 {
	out := map[int]float64{}
	for i := 0; i+1 < w.Len() && len(out) < maxCIDWidths; {
		first := int(w.Index(i).Int64())
		if next := w.Index(i + 1); next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && len(out) < maxCIDWidths; j++ {
				out[first+j] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		if i+2 >= w.Len() {
			break
		}
		last, width := int(w.Index(i+1).Int64()), w.Index(i+2).Float64()
		for c := first; c <= last && len(out) < maxCIDWidths; c++ {
			out[c] = width
		}
		i += 3
	}
	return out
}

// codes splits raw into character codes: bytes, or byte pairs for a
// composite font.
func (f *pdfFont) codes(raw string) []int {
	if !f.composite {
		out := make([]int, len(raw))
		for i := range len(raw) {
			out[i] = int(raw[i])
		}
		return out
	}
	out := make([]int, 0, len(raw)/2)
	for i := 0; i+1 < len(raw); i += 2 {
		out = append(out, int(raw[i])<<8|int(raw[i+1]))
	}
	return out
}

// width is the advance of code in thousandths of an em.
func (f *pdfFont) width(code int) float64 {
	if f.composite {
		if w, ok := f.cidWidths[code]; ok {
			return w
		}
		return f.defaultWidth
	}
	if i := code - f.first; i >= 0 && i < len(f.widths) {
		return f.widths[i]
	}
	return f.defaultWidth
}
