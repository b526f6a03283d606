package document

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeText returns data as text with "\n" line ends, or false when data
// is not text: not UTF-8 (nor UTF-16 with a byte-order mark), holding a
// NUL, or with more than one control character (besides tab, line feed,
// carriage return, form feed and escape) in a hundred. A UTF-8
// byte-order mark is dropped.
func decodeText(data []byte) (string, bool) {
	var s string
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		s = string(data[3:])
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		var ok bool
		if s, ok = decodeUTF16(data); !ok {
			return "", false
		}
	default:
		s = string(data)
	}
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return "", false
	}
	control, runes := 0, 0
	for _, r := range s {
		runes++
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != 0x1b) || r == 0x7f {
			control++
		}
	}
	if control*100 > runes {
		return "", false
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n"), true
}

// decodeUTF16 decodes UTF-16 that starts with its byte-order mark.
func decodeUTF16(data []byte) (string, bool) {
	if len(data)%2 != 0 {
		return "", false
	}
	little := data[0] == 0xFF
	units := make([]uint16, 0, len(data)/2-1)
	for i := 2; i < len(data); i += 2 {
		if little {
			units = append(units, uint16(data[i])|uint16(data[i+1])<<8)
		} else {
			units = append(units, uint16(data[i])<<8|uint16(data[i+1]))
		}
	}
	s := string(utf16.Decode(units))
	return s, !strings.ContainsRune(s, utf8.RuneError)
}

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

func runeCount(s string) int { return utf8.RuneCountInString(s) }
