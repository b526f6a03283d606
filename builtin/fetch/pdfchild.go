package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"syscall"
)

// PDFCommand is the argument that makes an executable the PDF child
// process ChildPDFReader runs: the executable's main must then call
// ServePDFChild on its standard input and output, and do nothing else.
const PDFCommand = "__read-pdf"

// Limits of the PDF child process.
const (
	pdfMaxInput   = 64 << 20  // bytes of PDF read from stdin
	pdfMaxOutput  = 8 << 20   // bytes of JSON read back (1 MiB of text, escaped)
	pdfMaxStack   = 64 << 20  // a runaway recursion dies here, not at 1 GiB
	pdfMaxAddress = 4 << 30   // RLIMIT_AS
	pdfMaxCPU     = 30        // RLIMIT_CPU, seconds
	pdfMaxHeap    = 512 << 20 // soft heap goal
)

// pdfAnswer is what the child writes.
type pdfAnswer struct {
	Title string `json:"title"`
	Text  string `json:"text"`
	Error string `json:"error,omitempty"`
}

// ServePDFChild is the child process: it limits its own process (stack,
// heap goal, address space, CPU time), reads one PDF from r (at most 64
// MiB), and writes {"title","text","error"} as one JSON line to w; a PDF
// it cannot read is an answer with error set, not an error. A crash (a
// stack overflow in the parser, the address-space limit) ends only this
// process. Call it only in a process started for it: the limits hold for
// the rest of the process's life.
func ServePDFChild(r io.Reader, w io.Writer) error {
	debug.SetMaxStack(pdfMaxStack)
	debug.SetMemoryLimit(pdfMaxHeap)
	syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: pdfMaxAddress, Max: pdfMaxAddress})
	syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: pdfMaxCPU, Max: pdfMaxCPU})
	body, err := io.ReadAll(io.LimitReader(r, pdfMaxInput))
	if err != nil {
		return fmt.Errorf("read pdf: %w", err)
	}
	var a pdfAnswer
	if a.Title, a.Text, err = ReadPDF(body); err != nil {
		a = pdfAnswer{Error: err.Error()}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // text heavy in <>& must not grow past the output cap
	return enc.Encode(a)
}

// errPDFProcess is what the model reads when the child failed.
var errPDFProcess = PDFError("could not read this PDF: the reader stopped on it (the file may be damaged or built to break readers)")

// ChildPDFReader returns a Config.ReadPDF that runs the executable exe as
// "exe __read-pdf" (PDFCommand) per PDF, bounded by ctx, the child's own
// resource limits and a cap on its output. A child that crashes, hangs
// past ctx or answers garbage gives one clear error (ctx's when ctx
// ended) and takes nothing else down; a PDF the child cannot read gives
// its reader's message, shown to the model as is.
func ChildPDFReader(exe string) func(ctx context.Context, body []byte) (title, text string, err error) {
	return func(ctx context.Context, body []byte) (string, string, error) {
		cmd := exec.CommandContext(ctx, exe, PDFCommand)
		cmd.Stdin = bytes.NewReader(body)
		out := limitedBuffer{max: pdfMaxOutput}
		cmd.Stdout = &out
		cmd.Env = []string{"PATH=/usr/bin:/bin", "GOMAXPROCS=1"}
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return "", "", ctx.Err()
			}
			return "", "", errPDFProcess
		}
		var a pdfAnswer
		if out.over || json.Unmarshal(out.Bytes(), &a) != nil {
			return "", "", errPDFProcess
		}
		if a.Error != "" {
			return "", "", PDFError(a.Error)
		}
		return a.Title, a.Text, nil
	}
}

// limitedBuffer keeps at most max bytes and remembers it overflowed.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		return 0, errors.New("output too large")
	}
	return b.Buffer.Write(p)
}

// SelfPDFReader is ChildPDFReader over the running executable, which must
// answer PDFCommand with ServePDFChild (quiver does); nil, so fetch_url
// reads PDFs in process, when the executable cannot be found.
func SelfPDFReader() func(ctx context.Context, body []byte) (title, text string, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return ChildPDFReader(exe)
}
