package tmpl

import "strings"

// The scanners below find what the regular expressions macroRef and
// directive find, match for match (FuzzScannersMatchTheExpressions),
// without the regexp engine: a turn's prompt and fragments are parsed
// and rendered on every uncached turn, and the two scans were a tenth
// of its assembly.

// nextMacroRef returns the first match of macroRef (`\{([a-z][a-z0-9_]*)\}`)
// in s at or after from, as FindStringSubmatchIndex gives it (the match,
// then the key), and false when there is none.
func nextMacroRef(s string, from int) ([4]int, bool) {
	for from < len(s) {
		i := strings.IndexByte(s[from:], '{')
		if i < 0 {
			break
		}
		i += from
		j := i + 1
		if j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
			for j < len(s) && keyByte(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '}' {
				return [4]int{i, j + 1, i + 1, j}, true
			}
		}
		from = i + 1
	}
	return [4]int{}, false
}

// keyByte reports whether b may follow a macro key's first letter.
func keyByte(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '_'
}

// nextDirective returns the first match of directive in s at or after
// from, as FindStringSubmatchIndex gives it (the match, then the body:
// the keyword and what follows it, without the spaces around), and false
// when there is none.
func nextDirective(s string, from int) ([4]int, bool) {
	for from < len(s) {
		i := strings.Index(s[from:], "{{")
		if i < 0 {
			break
		}
		i += from
		if m, ok := directiveAt(s, i); ok {
			return m, true
		}
		from = i + 1
	}
	return [4]int{}, false
}

// directiveAt matches directive at i, where s has "{{": spaces, then
// "/" and spaces and "if", or "if", or "else" (any case; "else" also
// with the long s ſ, which case folding pairs with s), at a word
// boundary; then anything but braces; then spaces and "}}". The body
// ends before the spaces that precede "}}".
func directiveAt(s string, i int) ([4]int, bool) {
	start := skipSpaces(s, i+2)
	j := start
	switch {
	case j < len(s) && s[j] == '/':
		k := skipSpaces(s, j+1)
		n := foldedPrefix(s[k:], "if")
		if n == 0 {
			return [4]int{}, false
		}
		j = k + n
	default:
		n := foldedPrefix(s[j:], "if")
		if n == 0 {
			n = foldedPrefix(s[j:], "else")
		}
		if n == 0 {
			return [4]int{}, false
		}
		j += n
	}
	if j < len(s) && asciiWord(s[j]) {
		return [4]int{}, false // no word boundary after the keyword
	}
	k := j
	for k < len(s) && s[k] != '{' && s[k] != '}' {
		k++
	}
	if k+1 >= len(s) || s[k] != '}' || s[k+1] != '}' {
		return [4]int{}, false
	}
	end := k
	for end > j && regexpSpace(s[end-1]) {
		end--
	}
	return [4]int{i, k + 2, start, end}, true
}

// skipSpaces returns the first index at or after i that is not one of
// the regular expression's \s.
func skipSpaces(s string, i int) int {
	for i < len(s) && regexpSpace(s[i]) {
		i++
	}
	return i
}

// regexpSpace is RE2's \s: tab, newline, form feed, carriage return and
// space (not vertical tab).
func regexpSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

// asciiWord is RE2's \w, which its \b is defined by.
func asciiWord(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_'
}

// foldedPrefix returns how many bytes of s spell word (lower-case ASCII)
// under simple case folding, 0 when s does not begin with it. Of the
// letters of "if" and "else", only s folds to a letter outside ASCII:
// ſ (U+017F, "\xc5\xbf").
func foldedPrefix(s, word string) int {
	n := 0
	for k := 0; k < len(word); k++ {
		c := word[k]
		switch {
		case n < len(s) && s[n]|0x20 == c && s[n] >= 'A':
			n++
		case c == 's' && strings.HasPrefix(s[n:], "\u017f"):
			n += len("\u017f")
		default:
			return 0
		}
	}
	return n
}
