// Package browser checks visual documents (HTML and SVG artifacts) the way
// a person would see them, in headless Chromium, with every network
// request blocked: only the document's own inline content loads.
//
// This file is the contract the artifact tools code against ([Checker]);
// the Chromium implementation lives beside it.
package browser

import (
	"context"
	"errors"
	"time"
)

// Kind is the type of a checked document.
type Kind string

// The kinds a Checker renders.
const (
	HTML Kind = "html"
	SVG  Kind = "svg"
)

// Bounds of one check.
const (
	// MaxPages is the most pages (viewports) one check renders.
	MaxPages = 10
	// MaxDocumentBytes is the largest document a check accepts.
	MaxDocumentBytes = 2 << 20
	// MinViewport and MaxViewport bound a viewport's width and height in
	// CSS pixels.
	MinViewport = 100
	MaxViewport = 4096
)

// ErrUnavailable reports that no browser is installed or it cannot start;
// the artifact tools that need one are left out of a turn with this reason.
var ErrUnavailable = errors.New("browser: headless Chromium is not available")

// Document is what a check renders: the artifact's content as written.
type Document struct {
	Kind    Kind
	Content string
}

// Viewport is a page size in CSS pixels.
type Viewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// DefaultViewport is used when a check names none.
var DefaultViewport = Viewport{Width: 1280, Height: 800}

// Message is one console message or uncaught error of the page.
type Message struct {
	// Level is "error", "warning", "log", ... as the browser reports it;
	// an uncaught exception is "exception".
	Level string `json:"level"`
	Text  string `json:"text"`
}

// Box is an element's box in CSS pixels, with what is wrong with it.
type Box struct {
	// Selector names the element (tag, id and classes, as a CSS selector
	// that finds it).
	Selector string  `json:"selector"`
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
	Width    float64 `json:"width"`
	Height   float64 `json:"height"`
	// Overflows reports that the element's content is larger than its
	// box (scroll size past client size) or that it reaches past the
	// viewport's width.
	Overflows bool `json:"overflows,omitempty"`
	// Clipped reports text cut off: the element's text overflows its box
	// and the overflow is hidden (or ellipsised).
	Clipped bool `json:"clipped,omitempty"`
}

// Page is what one viewport showed.
type Page struct {
	Viewport Viewport `json:"viewport"`
	// Console holds the page's console messages and uncaught errors, in
	// order, at most 50, each text at most 500 bytes.
	Console []Message `json:"console,omitempty"`
	// ConsoleOmitted counts the messages past the 50 kept.
	ConsoleOmitted int `json:"console_omitted,omitempty"`
	// Blocked lists the URLs the page tried to load and was refused, in
	// order, at most 50.
	Blocked []string `json:"blocked,omitempty"`
	// BlockedOmitted counts the distinct blocked URLs past the 50 kept.
	BlockedOmitted int `json:"blocked_omitted,omitempty"`
	// Screenshot is a PNG of the viewport (Inspect only).
	Screenshot []byte `json:"-"`
	// Description is a text account of the layout for a model that cannot
	// see the screenshot: the document's size, its main blocks with their
	// boxes, and what overflows or is cut off.
	Description string `json:"description"`
	// Boxes are the elements measured (Measure only): every element the
	// selectors matched, or, without selectors, those that overflow or
	// are clipped, at most 200.
	Boxes []Box `json:"boxes,omitempty"`
	// ScrollWidth and ScrollHeight are the document's full size.
	ScrollWidth  int `json:"scroll_width"`
	ScrollHeight int `json:"scroll_height"`
}

// Report is the outcome of one check.
type Report struct {
	Pages   []Page        `json:"pages"`
	Elapsed time.Duration `json:"-"`
}

// Checker renders documents. Implementations are safe for concurrent use;
// every method refuses a document over MaxDocumentBytes, more than
// MaxPages viewports or a viewport out of bounds with one error, before
// starting anything. No method lets the document reach the network.
type Checker interface {
	// Inspect renders doc at each viewport (DefaultViewport when none) and
	// returns console errors, blocked loads, a screenshot and a
	// description per page.
	Inspect(ctx context.Context, doc Document, viewports []Viewport) (Report, error)
	// Measure renders doc at each viewport and reports the boxes of the
	// elements selectors match (CSS selectors, at most 20), or, with none,
	// of the elements that overflow or are clipped.
	Measure(ctx context.Context, doc Document, viewports []Viewport, selectors []string) (Report, error)
	// PrintPDF prints doc to a PDF (A4 unless the document's CSS @page
	// says otherwise) and returns its bytes, at most MaxPDFBytes.
	PrintPDF(ctx context.Context, doc Document) ([]byte, error)
}

// MaxPDFBytes bounds a PDF PrintPDF returns.
const MaxPDFBytes = 20 << 20
