package app

import (
	"context"
	"os"

	"github.com/quiverhq/quiver/builtin/fetch"
)

// pdfCommand is the hidden command that reads one PDF in a child process
// (see fetch.ServePDFChild).
const pdfCommand = fetch.PDFCommand

// runReadPDF is the child: the PDF on standard input, the answer on
// standard output.
func runReadPDF(env Env) error {
	in := env.Stdin
	if in == nil {
		in = os.Stdin
	}
	return fetch.ServePDFChild(in, env.Stdout)
}

// pdfReader returns fetch_url's PDF reader: the executable exe run as
// "exe __read-pdf" per PDF (see fetch.ChildPDFReader).
func pdfReader(exe string) func(ctx context.Context, body []byte) (string, string, error) {
	return fetch.ChildPDFReader(exe)
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
