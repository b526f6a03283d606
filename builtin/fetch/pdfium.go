package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Quiver reads PDFs with PDFium, the engine of Chromium's PDF viewer,
// compiled to WebAssembly (go-pdfium's build) and run under wazero. PDFium
// maps a font's codes to text the way a viewer that copies text does: the
// ToUnicode map, then the encoding, then the embedded font's own tables,
// which is what browser-printed CJK documents need (see docs/pdf.md for
// the measurements that chose it).
//
// The WebAssembly sandbox replaces the child process the previous reader
// ran in: the engine cannot reach the file system (no directory is
// mounted), its memory is capped (pdfiumMaxMemory per document), a fault
// in it is a trap that ends the call with an error, and a document that
// takes too long is stopped by closing its module (pdfiumMaxTime, or the
// caller's context). Each document gets a fresh module instance, so one
// file cannot leave state for the next.

// Limits of PDFium reading.
const (
	// pdfiumMaxMemory bounds one document's WebAssembly memory; a file
	// that needs more fails as too complex.
	pdfiumMaxMemory = 512 << 20
	// pdfiumMaxTime bounds the reading of one document, whatever the
	// caller's context allows.
	pdfiumMaxTime = 30 * time.Second
	// pdfiumWorkers is how many documents are read at once; more wait.
	pdfiumWorkers = 2
)

// PDFReader reads PDFs with PDFium. The zero value is not usable; call
// NewPDFReader. It is safe for concurrent use; the engine is compiled on
// first use (a few seconds, once per PDFReader).
type PDFReader struct {
	// maxMemory bounds one document's memory; NewPDFReader sets
	// pdfiumMaxMemory.
	maxMemory uint32
	once      sync.Once
	pool      pdfium.Pool
	err       error
}

// NewPDFReader returns a PDFReader; nothing is compiled until the first
// Read.
func NewPDFReader() *PDFReader { return &PDFReader{maxMemory: pdfiumMaxMemory} }

// defaultPDFReader is the reader behind ReadPDF, compiled once per process
// on first use: compiled code is immutable, and compiling per call costs
// seconds.
var defaultPDFReader = NewPDFReader()

// ReadPDF reads body with the process's shared PDFReader, without a
// deadline of its caller's (pdfiumMaxTime still holds).
func ReadPDF(body []byte) (title, text string, err error) {
	return defaultPDFReader.Read(context.Background(), body)
}

// DefaultPDFReader returns the process's shared PDFReader's Read: what the
// composition root gives fetch_url and the document extractor.
func DefaultPDFReader() func(ctx context.Context, body []byte) (title, text string, err error) {
	return defaultPDFReader.Read
}

// start compiles the engine.
func (r *PDFReader) start() error {
	r.once.Do(func() {
		rc := wazero.NewRuntimeConfig().
			WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
			WithMemoryLimitPages(r.maxMemory / 65536).
			WithCloseOnContextDone(true)
		r.pool, r.err = webassembly.Init(webassembly.Config{
			MaxTotal:      pdfiumWorkers,
			FSConfig:      wazero.NewFSConfig(), // nothing of the host's is mounted
			RuntimeConfig: rc,
			Stdout:        io.Discard,
			Stderr:        io.Discard,
		})
		if r.err != nil {
			r.err = fmt.Errorf("pdf: start pdfium: %w", r.err)
		}
	})
	return r.err
}

// Read extracts the title and the text of a PDF: each page under a
// "--- page N ---" line, pages in document order. The text is valid
// UTF-8 and at most maxCachedChars bytes; a note at the end says when
// pages were left out, and a page whose characters are mostly not text
// (see pageReadable) is replaced by a line saying it could not be read.
// Every failure of the file is a *fetchError whose message suits the
// model and never quotes the file; ctx's error is returned when ctx ends.
func (r *PDFReader) Read(ctx context.Context, body []byte) (title, text string, err error) {
	if err := r.start(); err != nil {
		return "", "", err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, pdfiumMaxTime)
	defer cancel()
	inst, err := r.pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ended(parent, ctx)
		}
		return "", "", fmt.Errorf("pdf: pdfium instance: %w", err)
	}
	// Kill interrupts a call in progress by closing the module; Close
	// after it only reports that it is closed.
	stop := context.AfterFunc(ctx, func() { inst.Kill() })
	defer func() {
		if stop() {
			inst.Close()
		}
	}()
	defer func() {
		if x := recover(); x != nil {
			title, text, err = "", "", &fetchError{msg: pdfUnreadable, err: fmt.Errorf("pdf: panic: %v", x)}
		}
		// A read the deadline or the caller stopped is never a result,
		// even one whose earlier pages were read: the pages after the
		// stop would read as unreadable, and the text would be cached as
		// the whole document.
		if ctx.Err() != nil {
			title, text, err = "", "", ended(parent, ctx)
		}
	}()
	return readDocument(ctx, inst, body)
}

// ended is the error for a read stopped by ctx (parent with the reader's
// time bound): the caller's own error when parent ended, else the
// document took too long.
func ended(parent, ctx context.Context) error {
	if err := parent.Err(); err != nil {
		return err
	}
	return &fetchError{msg: pdfTooComplex, err: ctx.Err()}
}

// readDocument opens body in inst and reads its title and pages, until
// ctx ends.
func readDocument(ctx context.Context, inst pdfium.Pdfium, body []byte) (title, text string, err error) {
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &body})
	if err != nil {
		switch {
		case errors.Is(err, pdfiumerrors.ErrPassword) || errors.Is(err, pdfiumerrors.ErrSecurity):
			return "", "", &fetchError{msg: pdfEncrypted, err: err}
		case isOutOfMemory(err):
			return "", "", &fetchError{msg: pdfTooComplex, err: err}
		}
		return "", "", &fetchError{msg: pdfUnreadable, err: err}
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	if m, err := inst.FPDF_GetMetaText(&requests.FPDF_GetMetaText{Document: doc.Document, Tag: "Title"}); err == nil {
		title = oneLine(m.Value)
	}
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return "", "", &fetchError{msg: pdfUnreadable, err: err}
	}
	pages := pdfPageTexts{total: count.PageCount}
	for i := 0; i < min(count.PageCount, maxPDFPages) && !pages.full(); i++ {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		t, unmapped, err := pageText(inst, requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}})
		if err != nil && (isOutOfMemory(err) || isClosed(err)) {
			return "", "", &fetchError{msg: pdfTooComplex, err: err}
		}
		pages.add(t, unmapped, err)
	}
	text, err = pages.text()
	return title, text, err
}

// isOutOfMemory reports an error from PDFium running out of its memory.
func isOutOfMemory(err error) bool {
	s := err.Error()
	return strings.Contains(s, "out of memory") || strings.Contains(s, "memory limit") || strings.Contains(s, "unreachable")
}

// isClosed reports an error from a call on a module that was closed (the
// deadline passed or the caller cancelled).
func isClosed(err error) bool {
	s := err.Error()
	return strings.Contains(s, "module closed") || strings.Contains(s, "closed with exit_code") || strings.Contains(s, "instance is closed")
}

// pageText is one page's text and how many of its characters PDFium could
// not map to Unicode (a font without ToUnicode map or usable encoding,
// whose codes PDFium passes through as if they were code points).
func pageText(inst pdfium.Pdfium, page requests.Page) (text string, unmapped int, err error) {
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: page})
	if err != nil {
		return "", 0, err
	}
	defer inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	n, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil || n.Count <= 0 {
		return "", 0, err
	}
	t, err := inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: tp.TextPage, Count: n.Count})
	if err != nil {
		return "", 0, err
	}
	// A sample of the characters estimates the share: a call per
	// character would cost more than reading the text.
	step := max(1, n.Count/mapErrorSample)
	for i := 0; i < n.Count; i += step {
		if e, err := inst.FPDFText_HasUnicodeMapError(&requests.FPDFText_HasUnicodeMapError{TextPage: tp.TextPage, Index: i}); err == nil && e.HasUnicodeMapError {
			unmapped += step
		}
	}
	return t.Text, min(unmapped, n.Count), nil
}

// mapErrorSample is about how many characters of a page pageText asks
// PDFium about.
const mapErrorSample = 128
