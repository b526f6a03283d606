package intent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Request is one detection asked for outside a turn: a line of
// `quiver intent --jsonl`, {"id", "message", "history"}.
type Request struct {
	// ID is echoed in the Response as given (any JSON value; absent is
	// null).
	ID json.RawMessage `json:"id"`
	// Message is the triggering message.
	Message string `json:"message"`
	// History are earlier user messages, oldest first.
	History []string `json:"history"`
}

// Response answers a Request: its ID and the targets the message opens,
// {"id", "families"}; Families is never nil.
type Response struct {
	ID       json.RawMessage `json:"id"`
	Families []string        `json:"families"`
}

// MaxRequestBytes bounds one line of a request stream.
const MaxRequestBytes = 1 << 20

// ParseRequest decodes one request: the first JSON value of line, which
// must be an object with no fields but id, message and history. Anything
// else is an error saying what is wrong.
func ParseRequest(line string) (Request, error) {
	var req intentLine
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return Request{}, err
	}
	return Request(req), nil
}

// intentLine is what ParseRequest decodes into. encoding/json names the
// struct type in a type error ("Go struct field intentLine.message"), and
// `quiver intent --jsonl` has always printed that name: keep it.
type intentLine Request

// Probe detects requests as `quiver intent` does, outside a turn: one
// community's custom triggers and re-scan depth, under a user's mode.
// Safe for concurrent use when Detector is (it always is).
type Probe struct {
	// Detector is required.
	Detector *Detector
	// Custom are the community's triggers; nil means none.
	Custom *Custom
	// HistoryTurns is how many of a request's earlier messages are
	// re-scanned (0–MaxHistoryTurns).
	HistoryTurns int
	// UserMode off opens nothing; follow (also "") and on detect, as the
	// probe shows what the mode opens when it applies.
	UserMode string
	// Shift is the community's classifier shift (Input.Shift); nil keeps
	// the detector's.
	Shift *float64
}

// Detect returns what r's message opens, its history read as earlier user
// messages; nothing under UserMode off.
func (p Probe) Detect(r Request) Result {
	if p.UserMode == UserOff {
		return Result{}
	}
	in := Input{Text: r.Message, HistoryTurns: p.HistoryTurns, Custom: p.Custom, Shift: p.Shift}
	for _, h := range r.History {
		in.History = append(in.History, Message{Role: RoleUser, Text: h})
	}
	return p.Detector.Detect(in)
}

// LineError is a line of a request stream that is not a Request: nothing
// after it is read or answered.
type LineError struct {
	// Line is the line's number, from 1.
	Line int
	// Err is ParseRequest's error.
	Err error
}

// Error names the line.
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns Err.
func (e *LineError) Unwrap() error { return e.Err }

// AnswerLines reads requests from r, one JSON object a line (blank lines
// skipped, each at most MaxRequestBytes), and writes each one's Response
// to w as a line of JSON, in order. A malformed line stops the run with a
// *LineError, after the answers to the lines before it are written. Read
// and write failures are returned wrapped.
func AnswerLines(r io.Reader, w io.Writer, detect func(Request) Result) (err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxRequestBytes)
	bw := bufio.NewWriter(w)
	defer func() {
		if ferr := bw.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("write responses: %w", ferr)
		}
	}()
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		req, err := ParseRequest(line)
		if err != nil {
			return &LineError{Line: n, Err: err}
		}
		if err := enc.Encode(Response{ID: req.ID, Families: nonNil(detect(req).Targets)}); err != nil {
			return fmt.Errorf("write responses: %w", err)
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read requests: %w", err)
	}
	return nil
}
