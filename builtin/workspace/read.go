package workspace

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/tool"
)

//go:embed read_file.md
var readDescription string

// maxReadLines bounds the limit argument of read_file.
const maxReadLines = 2000

type readIn struct {
	Path   string `json:"path" jsonschema:"file path in the workspace"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to read, from 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most lines to read"`
}

func (w *workspaces) readTool() *tool.Tool {
	s := spec("read_file", readDescription, tool.Read,
		tool.Limit{Name: "max_output_chars", Value: maxOutputChars},
		tool.Limit{Name: "max_lines", Value: maxReadLines})
	s.Tune = func(sc *jsonschema.Schema) {
		sc.Properties["offset"].Minimum = jsonschema.Ptr(1.0)
		sc.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
		sc.Properties["limit"].Maximum = jsonschema.Ptr(float64(maxReadLines))
	}
	return tool.New(s, w.read)
}

func (w *workspaces) read(ctx context.Context, s tool.Scope, in readIn) (string, error) {
	name, err := cleanPath(in.Path)
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	root, err := w.open(s)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, fi, err := openRegular(root, name)
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	defer f.Close()
	if fi.Size() == 0 {
		return fmt.Sprintf("%s is empty.", name), nil
	}
	r := bufio.NewReaderSize(f, 64<<10)
	if head, _ := r.Peek(binaryProbe); bytes.IndexByte(head, 0) >= 0 {
		return "", fmt.Errorf("read_file: %s looks binary (it holds NUL bytes); read_file reads text files only", name)
	}
	offset := max(in.Offset, 1)
	pg, err := readPage(ctx, r, offset, in.Limit)
	if err != nil {
		return "", tool.Infra(fmt.Errorf("read_file: %s: %w", name, err))
	}
	if pg.first == 0 {
		return "", fmt.Errorf("read_file: offset %d is past the end of %s, which has %d lines", offset, name, pg.total)
	}
	return pg.render(name), nil
}

// page is the part of a file one read_file call shows.
type page struct {
	text        strings.Builder
	first, last int // line numbers shown, from 1; 0 when none
	total       int // lines in the file
	cutLen      int // length of a line shown cut short, else 0
}

// readPage reads the lines from offset on, at most limit of them (0: no
// limit) and at most maxOutputChars bytes, then counts the rest. A first line
// longer than the budget is shown cut short.
func readPage(ctx context.Context, r *bufio.Reader, offset, limit int) (*page, error) {
	pg := &page{}
	budget := maxOutputChars
	stopped := false
	for n := 1; ; n++ {
		keep := budget + 1
		if stopped || n < offset {
			keep = 0
		}
		line, full, err := readLine(r, keep)
		if errors.Is(err, io.EOF) {
			pg.total = n - 1
			return pg, nil
		}
		if err != nil {
			return nil, err
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if keep == 0 {
			continue
		}
		stopped = pg.add(n, line, full, &budget) || (limit > 0 && n-offset+1 >= limit)
	}
}

// add appends line n if it fits in budget and reports whether reading
// should stop. The first line is cut to fit rather than dropped.
func (pg *page) add(n int, line []byte, full int, budget *int) bool {
	if len(line)+1 > *budget && pg.first != 0 {
		return true
	}
	if len(line) > *budget {
		line = cutUTF8(line, *budget)
		pg.cutLen = full
	}
	if pg.first == 0 {
		pg.first = n
	}
	pg.last = n
	pg.text.Write(line)
	pg.text.WriteByte('\n')
	*budget -= len(line) + 1
	return pg.cutLen != 0
}

// render frames the page with the line numbers it covers and how to go on.
func (pg *page) render(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s: lines %d-%d of %d]\n", name, pg.first, pg.last, pg.total)
	b.WriteString(pg.text.String())
	if pg.cutLen != 0 {
		fmt.Fprintf(&b, "\n[line %d is %d bytes long; only the first %d are shown]", pg.last, pg.cutLen, pg.text.Len()-1)
	}
	if pg.last < pg.total {
		fmt.Fprintf(&b, "\n[%d more lines; call read_file with offset=%d to read on]", pg.total-pg.last, pg.last+1)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// readLine reads one line and returns at most keep bytes of it (without the
// newline) and its full length. It never holds more than keep bytes, however
// long the line. At the end of input it returns io.EOF.
func readLine(r *bufio.Reader, keep int) ([]byte, int, error) {
	var line []byte
	full := 0
	for {
		chunk, err := r.ReadSlice('\n')
		full += len(chunk)
		if room := keep - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !(errors.Is(err, io.EOF) && full > 0) {
			return nil, 0, err
		}
		if err == nil {
			full--
			line = bytes.TrimSuffix(line, []byte("\n"))
		}
		return line, full, nil
	}
}

// cutUTF8 returns at most n bytes of b, not splitting a character.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}
