package browser

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of what a check reports and accepts beyond those of the contract.
const (
	// MaxSelectors is the most CSS selectors one Measure takes.
	MaxSelectors = 20
	// MaxSelectorBytes bounds one selector.
	MaxSelectorBytes = 500
	// MaxMessages is the most console messages a page reports.
	MaxMessages = 50
	// MaxMessageBytes bounds one console message's text.
	MaxMessageBytes = 500
	// MaxBlocked is the most blocked URLs a page reports.
	MaxBlocked = 50
	// MaxURLBytes bounds one blocked URL as reported.
	MaxURLBytes = 500
	// MaxBoxes is the most boxes a page reports.
	MaxBoxes = 200
	// MaxDescriptionBytes bounds a page's Description.
	MaxDescriptionBytes = 6000
)

// Validate reports the first thing wrong with doc, or nil: an unknown
// kind, empty content, content over MaxDocumentBytes or not UTF-8.
func (d Document) Validate() error {
	switch d.Kind {
	case HTML, SVG:
	default:
		return fmt.Errorf("document kind %q: want %q or %q", d.Kind, HTML, SVG)
	}
	if strings.TrimSpace(d.Content) == "" {
		return fmt.Errorf("document is empty")
	}
	if len(d.Content) > MaxDocumentBytes {
		return fmt.Errorf("document is %d bytes, more than the %d a check renders", len(d.Content), MaxDocumentBytes)
	}
	if !utf8.ValidString(d.Content) {
		return fmt.Errorf("document is not valid UTF-8")
	}
	return nil
}

// Validate reports whether v is within MinViewport..MaxViewport on both
// sides.
func (v Viewport) Validate() error {
	if v.Width < MinViewport || v.Width > MaxViewport || v.Height < MinViewport || v.Height > MaxViewport {
		return fmt.Errorf("viewport %d×%d: width and height must be %d to %d CSS pixels", v.Width, v.Height, MinViewport, MaxViewport)
	}
	return nil
}

// Viewports validates a check's viewports and returns them, or
// []Viewport{DefaultViewport} for none; more than MaxPages is an error.
func Viewports(vs []Viewport) ([]Viewport, error) {
	if len(vs) == 0 {
		return []Viewport{DefaultViewport}, nil
	}
	if len(vs) > MaxPages {
		return nil, fmt.Errorf("%d viewports: a check renders at most %d pages", len(vs), MaxPages)
	}
	for i, v := range vs {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("viewport %d: %w", i+1, err)
		}
	}
	return vs, nil
}

// ValidateSelectors reports the first thing wrong with Measure's
// selectors: more than MaxSelectors, an empty one or one over
// MaxSelectorBytes. Whether each is valid CSS is the browser's to say.
func ValidateSelectors(sels []string) error {
	if len(sels) > MaxSelectors {
		return fmt.Errorf("%d selectors: at most %d", len(sels), MaxSelectors)
	}
	for i, s := range sels {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("selector %d is empty", i+1)
		}
		if len(s) > MaxSelectorBytes {
			return fmt.Errorf("selector %d is %d bytes, more than %d", i+1, len(s), MaxSelectorBytes)
		}
	}
	return nil
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
