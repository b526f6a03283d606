package terminal

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"unicode"
)

// Report is a command's output with a text form for people.
type Report interface{ WriteText(w io.Writer) }

// Emit writes v to w as indented JSON when asJSON, else as its text form.
func Emit(w io.Writer, asJSON bool, v Report) error {
	if asJSON {
		return WriteJSON(w, v)
	}
	v.WriteText(w)
	return nil
}

// WriteJSON writes v as indented JSON, with no HTML escaping (a person
// or a script reads it, not a browser).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Printable is s as one line of printable text: every rune that is not
// printable (a newline, an escape, a control) becomes a space, so that a
// string from a server or a model cannot move the cursor or fake lines.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
}

// Quiet is the logger a terminal chat gives its turns: l with only the
// records at slog.LevelError and above. A turn's own failure (a provider
// that cannot be reached, a time limit) reaches the person as the
// Printer's one friendly error line; the raw warning the server logs for
// operators would follow it on the same screen and say it again.
func Quiet(l *slog.Logger) *slog.Logger {
	return slog.New(quietHandler{l.Handler()})
}

// quietHandler passes h the records at slog.LevelError and above.
type quietHandler struct{ slog.Handler }

// Enabled implements slog.Handler.
func (q quietHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelError && q.Handler.Enabled(ctx, level)
}

// WithAttrs implements slog.Handler.
func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{q.Handler.WithAttrs(as)}
}

// WithGroup implements slog.Handler.
func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{q.Handler.WithGroup(name)}
}
