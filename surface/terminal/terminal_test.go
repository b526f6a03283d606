package terminal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/tool"
)

func TestPrinterText(t *testing.T) {
	var out, errw strings.Builder
	p := &Printer{Out: &out, Err: &errw}
	for _, ev := range []agent.Event{
		{Kind: agent.EventText, Text: "Hello"},
		{Kind: agent.EventToolCall, Call: &llm.ToolCall{Name: "calculate", Args: []byte(`{"expression":   "6*7"}`)}},
		{Kind: agent.EventToolResult, Result: &agent.Result{Name: "calculate", Content: "42"}},
		{Kind: agent.EventToolResult, Result: &agent.Result{Name: "read_file", Content: "no such file", IsError: true}},
		{Kind: agent.EventPause, Pause: &tool.Pause{Question: "Which city?", Suggested: "Hanoi"}},
		{Kind: agent.EventNextActions, Actions: []string{"a", "b"}},
		{Kind: agent.EventChecklist, Checklist: &tool.Checklist{Items: []tool.ChecklistItem{{Text: "Find", Status: tool.ChecklistDone}, {Text: "Draw", Status: tool.ChecklistInProgress}, {Text: "Write", Status: tool.ChecklistPending}}}},
		{Kind: agent.EventText, Text: "partial"},
		{Kind: agent.EventError, Error: "model unavailable"},
		{Kind: agent.EventDone},
	} {
		p.Event(ev)
	}
	want := "Hello\n→ calculate {\"expression\": \"6*7\"}\n← calculate: 42\n✗ read_file: no such file\n? Which city?\n  (suggested: Hanoi)\nsuggestions: a · b\nchecklist:\n  [x] Find\n  [>] Draw\n  [ ] Write\npartial\n"
	if out.String() != want {
		t.Errorf("out:\n%q\nwant\n%q", out.String(), want)
	}
	if errw.String() != "quiver: model unavailable\n" {
		t.Errorf("err = %q", errw.String())
	}
	if got := p.prompt(); got != "answer> " {
		t.Errorf("prompt after a pause = %q", got)
	}
	if got := p.prompt(); got != "> " {
		t.Errorf("prompt after the answer prompt = %q", got)
	}
}

func TestPrinterJSON(t *testing.T) {
	var out strings.Builder
	p := &Printer{Out: &out, Err: &out, JSON: true}
	p.Event(agent.Event{Kind: agent.EventText, ConversationID: "c1", Text: "hi"})
	if got := out.String(); got != `{"type":"text","conversation_id":"c1","turn_id":"","text":"hi"}`+"\n" {
		t.Errorf("json = %q", got)
	}
}

func TestClip(t *testing.T) {
	if got := Clip("a  b\n\tc", 10); got != "a b c" {
		t.Errorf("Clip = %q", got)
	}
	if got := Clip("abcdefghij", 5); got != "abcd…" {
		t.Errorf("Clip = %q", got)
	}
}

func TestLoopNotATerminal(t *testing.T) {
	var out strings.Builder
	p := &Printer{Out: &out, Err: &out}
	var said []string
	harmless := errors.New("error result")
	say := func(_ context.Context, m string) error {
		said = append(said, m)
		if m == "two" {
			return harmless
		}
		return nil
	}
	keep := func(err error) bool { return errors.Is(err, harmless) }
	err := Loop(context.Background(), strings.NewReader("one\n\n  \ntwo\nthree\n"), p, "banner", say, keep)
	if err != nil || strings.Join(said, ",") != "one,two,three" {
		t.Fatalf("Loop = %v, said %q", err, said)
	}
	if out.String() != "" {
		t.Errorf("printed %q without a terminal (no banner, no prompt expected)", out.String())
	}
	fatal := errors.New("store down")
	said = nil
	err = Loop(context.Background(), strings.NewReader("one\ntwo\n"), p, "", func(_ context.Context, m string) error {
		said = append(said, m)
		return fatal
	}, keep)
	if !errors.Is(err, fatal) || len(said) != 1 {
		t.Errorf("Loop after a fatal error = %v, said %q", err, said)
	}
}

func TestLoopRefusesOverlongLine(t *testing.T) {
	p := &Printer{Out: new(strings.Builder), Err: new(strings.Builder)}
	long := strings.Repeat("x", MaxLine+1)
	err := Loop(context.Background(), strings.NewReader(long+"\n"), p, "", func(context.Context, string) error {
		t.Error("an overlong line was passed on")
		return nil
	}, nil)
	if err == nil {
		t.Error("an overlong line was accepted")
	}
}
