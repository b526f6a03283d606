package workspace

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// matcher finds the lines of a file that hold any of a few literal strings.
// It searches the whole buffer with bytes.Index, which is vectorised, and
// only then works out line boundaries, so non-matching text costs little.
type matcher struct {
	queries [][]byte // lower-cased when fold
	fold    bool     // case-insensitive
	ascii   bool     // fold by lower-casing ASCII letters only (all queries are ASCII)
}

func newMatcher(queries []string, fold bool) *matcher {
	m := &matcher{fold: fold, ascii: true}
	for _, q := range queries {
		if fold {
			q = strings.ToLower(q)
		}
		m.queries = append(m.queries, []byte(q))
		m.ascii = m.ascii && isASCII(q)
	}
	return m
}

// find returns the start offsets of the first max matching lines of data,
// in order. scratch is reused for the case-folded copy.
func (m *matcher) find(data []byte, max int, scratch *[]byte) []int {
	hay := data
	if m.fold {
		if !m.ascii {
			return m.findUnicode(data, max)
		}
		hay = lowerASCII(data, scratch)
	}
	var starts []int
	for _, q := range m.queries {
		starts = appendLineStarts(starts, hay, q, max)
	}
	if len(m.queries) > 1 {
		slices.Sort(starts)
		starts = slices.Compact(starts)
	}
	return starts[:min(len(starts), max)]
}

// appendLineStarts appends the start offsets of the first max lines of hay
// that contain q.
func appendLineStarts(dst []int, hay, q []byte, max int) []int {
	pos := 0
	for n := 0; n < max; n++ {
		i := bytes.Index(hay[pos:], q)
		if i < 0 {
			break
		}
		at := pos + i
		dst = append(dst, bytes.LastIndexByte(hay[:at], '\n')+1)
		end := bytes.IndexByte(hay[at:], '\n')
		if end < 0 {
			break
		}
		pos = at + end + 1
	}
	return dst
}

// findUnicode is the slow path for case-insensitive non-ASCII strings,
// whose lower-case form may differ in length: it lower-cases line by line.
func (m *matcher) findUnicode(data []byte, max int) []int {
	var starts []int
	for off := 0; off < len(data) && len(starts) < max; {
		line, next := lineAt(data, off)
		lower := bytes.ToLower(line)
		for _, q := range m.queries {
			if bytes.Contains(lower, q) {
				starts = append(starts, off)
				break
			}
		}
		off = next
	}
	return starts
}

// lowerASCII returns data with ASCII letters lower-cased, in *scratch.
func lowerASCII(data []byte, scratch *[]byte) []byte {
	if cap(*scratch) < len(data) {
		*scratch = make([]byte, len(data)+len(data)/4)
	}
	out := (*scratch)[:len(data)]
	for i, c := range data {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lineAt returns the line starting at off, without its newline, and the
// offset of the next line.
func lineAt(data []byte, off int) ([]byte, int) {
	end := bytes.IndexByte(data[off:], '\n')
	if end < 0 {
		return data[off:], len(data)
	}
	return data[off : off+end], off + end + 1
}

// prevLine returns the start of the line before the one starting at off > 0.
func prevLine(data []byte, off int) int {
	return bytes.LastIndexByte(data[:off-1], '\n') + 1
}

// withContext turns matching line starts into output lines, adding up to c
// lines of context each side and, when c > 0, marking gaps between groups
// that are not adjacent.
func withContext(data []byte, starts []int, c int) []outLine {
	var out []outLine
	num, at := 1, 0 // line number of the line starting at offset at
	last := 0       // number of the last line emitted
	for k, s := range starts {
		num += bytes.Count(data[at:s], []byte{'\n'})
		from, fromNum := s, num
		for fromNum > last+1 && fromNum > num-c {
			from, fromNum = prevLine(data, from), fromNum-1
		}
		gap := c > 0 && last > 0 && fromNum > last+1
		for off, n := from, fromNum; n <= num; n++ {
			line, next := lineAt(data, off)
			out = append(out, outLine{num: n, text: showLine(line), match: n == num, gap: gap && n == fromNum})
			off = next
		}
		last = num
		_, at = lineAt(data, s)
		for i := 0; i < c && at < len(data) && (k+1 == len(starts) || at != starts[k+1]); i++ {
			line, next := lineAt(data, at)
			last++
			out = append(out, outLine{num: last, text: showLine(line)})
			at = next
		}
		num = last + 1
	}
	return out
}

// showLine renders a line for output: no trailing CR, valid UTF-8, at most
// maxLineChars bytes with an ellipsis when cut. It copies, as the buffer is
// reused.
func showLine(line []byte) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	cut := len(line) > maxLineChars
	line = cutUTF8(line, maxLineChars)
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if cut {
		s += "…"
	}
	return s
}
