package app

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

	"github.com/quiverhq/quiver/builtin/fetch"
)

// pdfCommand is the hidden command that reads one PDF in a child process:
// the PDF on stdin, {"title","text","error"} on stdout.
const pdfCommand = "__read-pdf"

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

// runReadPDF is the child: it limits itself, reads the PDF and answers.
// A crash (a stack overflow in the parser, the address-space limit) ends
// only this process.
func runReadPDF(env Env) error {
	debug.SetMaxStack(pdfMaxStack)
	debug.SetMemoryLimit(pdfMaxHeap)
	syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: pdfMaxAddress, Max: pdfMaxAddress})
	syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: pdfMaxCPU, Max: pdfMaxCPU})
	in := env.Stdin
	if in == nil {
		in = os.Stdin
	}
	body, err := io.ReadAll(io.LimitReader(in, pdfMaxInput))
	if err != nil {
		return fmt.Errorf("read pdf: %w", err)
	}
	var a pdfAnswer
	if a.Title, a.Text, err = fetch.ReadPDF(body); err != nil {
		a = pdfAnswer{Error: err.Error()}
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false) // text heavy in <>& must not grow past the output cap
	return enc.Encode(a)
}

// errPDFProcess is what the model reads when the child failed.
var errPDFProcess = fetch.PDFError("could not read this PDF: the reader stopped on it (the file may be damaged or built to break readers)")

// pdfReader returns fetch_url's PDF reader: the executable exe run as
// "exe __read-pdf" per PDF, bounded by ctx, its own resource limits and an
// output cap. A reader that crashes, hangs or answers garbage gives one
// clear error and takes nothing else down.
func pdfReader(exe string) func(ctx context.Context, body []byte) (string, string, error) {
	return func(ctx context.Context, body []byte) (string, string, error) {
		cmd := exec.CommandContext(ctx, exe, pdfCommand)
		cmd.Stdin = bytes.NewReader(body)
		var out limitedBuffer
		out.max = pdfMaxOutput
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
			return "", "", fetch.PDFError(a.Error)
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

// selfExecutable is the running quiver binary, for child processes; "" when
// it cannot be found (the in-process reader is used then).
func selfExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
