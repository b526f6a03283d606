// Package document extracts the text of the files people give an agent
// (attachments, knowledge): any UTF-8 text (source code, JSON, YAML,
// Markdown, plain text), DOCX, and PDF through an injected reader. It
// also cuts that text into chunks for indexing and into pages for
// reading.
//
// The kind of a file is detected from its bytes; the name and the
// declared media type only word the messages. Every input is bounded
// (MaxInputBytes in, MaxTextBytes out), and every refusal is one line
// that wraps one of the package's errors, so a caller can tell a binary
// file from an encrypted PDF with errors.Is.
package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Bounds of extraction.
const (
	// MaxInputBytes is the largest file Extract reads: 25 MiB, more than
	// a long report as PDF or DOCX, under store.MaxBlobBytes.
	MaxInputBytes = 25 << 20
	// MaxTextBytes bounds the text Extract returns: 4 MiB, about 2,000
	// pages of prose. Longer text is cut at a rune boundary and
	// Document.Truncated says so.
	MaxTextBytes = 4 << 20
)

// Kinds of refusal: every refusal is an *Error, with a one-line message
// that names the file, that unwraps to one of these; test with errors.Is.
var (
	// ErrBinary reports a file that is neither UTF-8 text, DOCX nor PDF.
	ErrBinary = errors.New("binary file")
	// ErrEncrypted reports an encrypted (password-protected) PDF.
	ErrEncrypted = errors.New("encrypted PDF")
	// ErrTooLarge reports a file over MaxInputBytes, or a DOCX whose
	// parts inflate past the archive bounds.
	ErrTooLarge = errors.New("file too large")
	// ErrUnreadable reports a PDF or DOCX that is damaged or that the
	// reader cannot read, and a PDF when no reader is configured.
	ErrUnreadable = errors.New("unreadable file")
)

// Kind is the detected kind of a file.
type Kind string

// Kinds Extract reads.
const (
	Text Kind = "text"
	DOCX Kind = "docx"
	PDF  Kind = "pdf"
)

// PDFReader extracts a PDF's title and text; builtin/fetch's
// DefaultPDFReader (PDFium in a WebAssembly sandbox, the one every PDF
// reader in Quiver uses) has this shape. An error's message is shown to
// people and models as is.
type PDFReader func(ctx context.Context, body []byte) (title, text string, err error)

// Document is the text of one file.
type Document struct {
	Kind Kind
	// Title is the PDF's title when it has one; "" otherwise.
	Title string
	// Text is valid UTF-8 with "\n" line ends, at most MaxTextBytes.
	Text string
	// Truncated reports that Text was cut at MaxTextBytes.
	Truncated bool
}

// Extractor extracts text. The zero value reads text and DOCX and
// refuses PDFs (ErrUnreadable). Safe for concurrent use.
type Extractor struct {
	// ReadPDF reads PDFs; nil refuses them.
	ReadPDF PDFReader
}

// Extract returns the text of the file called name, declared as
// mediaType (either may be empty), whose content is data. The kind is
// detected from data: "%PDF-" in the first KiB is a PDF, a ZIP holding
// word/document.xml is a DOCX, valid UTF-8 (or UTF-16 with a byte-order
// mark) without NUL and with few control characters is text; anything
// else gives ErrBinary. Data over MaxInputBytes gives ErrTooLarge before
// it is looked at; an encrypted PDF gives ErrEncrypted without reaching
// the reader.
func (x Extractor) Extract(ctx context.Context, name, mediaType string, data []byte) (Document, error) {
	label := describe(name, mediaType)
	if len(data) > MaxInputBytes {
		return Document{}, refuse(ErrTooLarge, "%s is %s; the limit is %s", label, byteSize(int64(len(data))), byteSize(MaxInputBytes))
	}
	switch {
	case isPDF(data):
		return x.pdf(ctx, label, data)
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return readDOCX(label, data)
	}
	text, ok := decodeText(data)
	if !ok {
		return Document{}, refuse(ErrBinary, "%s is a binary file; only PDF, DOCX and UTF-8 text can be read", label)
	}
	text, cut := capText(text, MaxTextBytes)
	return Document{Kind: Text, Text: text, Truncated: cut}, nil
}

// Error is a refusal: its message is one line that names the file and
// says why, and it unwraps to one of ErrBinary, ErrEncrypted,
// ErrTooLarge or ErrUnreadable.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

// refuse returns an *Error of kind with the formatted message.
func refuse(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// encryptRef finds a trailer's /Encrypt entry: a reference or a
// dictionary. Content streams are compressed in nearly every PDF, so page
// text does not match it.
var encryptRef = regexp.MustCompile(`/Encrypt\s*(?:\d+\s+\d+\s+R|<<)`)

func isPDF(data []byte) bool {
	return bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-"))
}

func (x Extractor) pdf(ctx context.Context, label string, data []byte) (Document, error) {
	if encryptRef.Match(data) {
		return Document{}, refuse(ErrEncrypted, "%s is an encrypted PDF; it cannot be read without its password", label)
	}
	if x.ReadPDF == nil {
		return Document{}, refuse(ErrUnreadable, "%s is a PDF, and no PDF reader is configured", label)
	}
	title, text, err := x.ReadPDF(ctx, data)
	if err != nil {
		if ctx.Err() != nil {
			return Document{}, ctx.Err()
		}
		msg := oneLine(err.Error())
		if strings.Contains(msg, "encrypted") {
			return Document{}, refuse(ErrEncrypted, "%s is an encrypted PDF; it cannot be read without its password", label)
		}
		return Document{}, refuse(ErrUnreadable, "%s: %s", label, msg)
	}
	text = strings.ReplaceAll(strings.ToValidUTF8(text, "\uFFFD"), "\r\n", "\n")
	text, cut := capText(text, MaxTextBytes)
	return Document{Kind: PDF, Title: oneLine(title), Text: text, Truncated: cut}, nil
}

// describe names a file in messages: its quoted name, and its declared
// type when there is one.
func describe(name, mediaType string) string {
	name = oneLine(name)
	if len(name) > 120 {
		name, _ = capText(name, 120)
		name += "…"
	}
	if name == "" {
		name = "the file"
	} else {
		name = fmt.Sprintf("%q", name)
	}
	if mt := oneLine(mediaType); mt != "" && len(mt) <= 100 {
		return fmt.Sprintf("%s (%s)", name, mt)
	}
	return name
}

// oneLine returns s as one line of valid UTF-8: control characters
// become spaces.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s))
}

// capText cuts s to at most max bytes at a rune boundary.
func capText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// byteSize spells n in MiB or KiB when it is a whole number of them.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
