package intent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/intent"
)

// TestParseRequest: a request is an object of id, message and history;
// an unknown field, a wrong type or a non-object is refused.
func TestParseRequest(t *testing.T) {
	tests := []struct {
		name string
		line string
		want intent.Request
		bad  string // part of the error; "" for none
	}{
		{"Full", `{"id":"a-1","message":"hi","history":["one","two"]}`, intent.Request{ID: []byte(`"a-1"`), Message: "hi", History: []string{"one", "two"}}, ""},
		{"NumberID", `{"id": 7, "message":"hi"}`, intent.Request{ID: []byte(`7`), Message: "hi"}, ""},
		{"NoID", `{"message":"hi"}`, intent.Request{Message: "hi"}, ""},
		{"UnknownField", `{"id":1,"msg":"x"}`, intent.Request{}, `unknown field "msg"`},
		{"WrongType", `{"message":3}`, intent.Request{}, "cannot unmarshal number into Go struct field intentLine.message of type string"},
		{"NotAnObject", `["hi"]`, intent.Request{}, "cannot unmarshal array"},
		{"NotJSON", `hi`, intent.Request{}, "invalid character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := intent.ParseRequest(tc.line)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("%+v, %v; want an error saying %q", got, err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestProbe: history is read as earlier user messages, re-scanned to the
// probe's depth; custom triggers apply; the user's off opens nothing while
// follow and on detect.
func TestProbe(t *testing.T) {
	custom, err := intent.CompileCustom(map[string][]string{intent.Image: {"pfp"}})
	if err != nil {
		t.Fatal(err)
	}
	p := intent.Probe{Detector: detector(t), Custom: custom, HistoryTurns: intent.DefaultHistoryTurns}
	req := intent.Request{Message: "new pfp pls", History: []string{"search the web for the latest Go release"}}
	for _, mode := range []string{"", intent.UserFollow, intent.UserOn} {
		p.UserMode = mode
		got := p.Detect(req)
		if d := cmp.Diff([]string{intent.Search, intent.Image}, got.Targets); d != "" {
			t.Errorf("mode %q: targets (-want +got):\n%s", mode, d)
		}
		var sources []string
		for _, m := range got.Matches {
			sources = append(sources, m.Source)
		}
		if d := cmp.Diff([]string{intent.SourceCustom, intent.SourceHistory}, sources); d != "" {
			t.Errorf("mode %q: sources (-want +got):\n%s", mode, d)
		}
	}
	p.UserMode = intent.UserOff
	if got := p.Detect(req); len(got.Targets) != 0 || len(got.Matches) != 0 {
		t.Errorf("user off: %+v, want nothing", got)
	}
	p.UserMode, p.HistoryTurns = intent.UserFollow, 0
	if got := p.Detect(req); !cmp.Equal(got.Targets, []string{intent.Image}) {
		t.Errorf("depth 0: %v, want the history not re-scanned", got.Targets)
	}
	if got := (intent.Probe{Detector: detector(t)}).Detect(req); len(got.Targets) != 0 {
		t.Errorf("no custom triggers: %v, want nothing", got.Targets)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

// TestAnswerLines: requests are answered in order, one line each, ids as
// given (null when absent, HTML characters unescaped) and blank lines skipped; a malformed line stops
// the run naming it, after the earlier answers are written; an over-long
// line and a failed write are errors, not silence.
func TestAnswerLines(t *testing.T) {
	p := intent.Probe{Detector: detector(t), HistoryTurns: intent.DefaultHistoryTurns}
	answer := func(in string) (string, error) {
		var out strings.Builder
		err := intent.AnswerLines(strings.NewReader(in), &out, p.Detect)
		return out.String(), err
	}
	out, err := answer("{\"id\":1,\"message\":\"remind me at 5pm to stretch\"}\n\n  \n{\"id\":2,\"message\":\"good morning!\"}\n{\"message\":\"hi\"}\n{\"id\":\"<a&b>\",\"message\":\"hi\"}")
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"id\":1,\"families\":[\"reminder\"]}\n{\"id\":2,\"families\":[]}\n{\"id\":null,\"families\":[]}\n{\"id\":\"<a&b>\",\"families\":[]}\n"; out != want {
		t.Errorf("out %q, want %q", out, want)
	}

	out, err = answer("{\"id\":1,\"message\":\"hello\"}\n{\"id\":2,\"msg\":\"x\"}\n{\"id\":3,\"message\":\"hello\"}\n")
	var le *intent.LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), `line 2: json: unknown field "msg"`) {
		t.Errorf("bad line: %v, want a *LineError naming line 2", err)
	}
	if want := "{\"id\":1,\"families\":[]}\n"; out != want {
		t.Errorf("before the bad line: out %q, want %q and nothing after", out, want)
	}
	if _, err := answer("{\"id\":1,\"msg\":\"x\"}\n"); !errors.As(err, &le) || le.Line != 1 {
		t.Errorf("bad first line: %v, want a *LineError naming line 1", err)
	}

	long := `{"message":"` + strings.Repeat("x", intent.MaxRequestBytes) + `"}`
	if _, err := answer(long); err == nil || !strings.HasPrefix(err.Error(), "read requests: ") || errors.As(err, &le) {
		t.Errorf("over-long line: %v, want a read error", err)
	}
	err = intent.AnswerLines(strings.NewReader("{\"id\":1,\"message\":\"hello\"}\n"), failWriter{}, p.Detect)
	if err == nil || !strings.Contains(err.Error(), "write responses: pipe closed") {
		t.Errorf("failed write: %v, want it returned", err)
	}
}
