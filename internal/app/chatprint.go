package app

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/quiverhq/quiver/agent"
)

// chatPrinter shows a turn's events: as JSON lines, or as text with the
// answer streamed to w and tool activity, pauses and errors beside it.
type chatPrinter struct {
	w, errw io.Writer
	json    bool
	midLine bool
	paused  bool
}

func (p *chatPrinter) event(ev agent.Event) {
	if p.json {
		b, err := json.Marshal(ev)
		if err == nil {
			fmt.Fprintf(p.w, "%s\n", b)
		}
		return
	}
	switch ev.Kind {
	case agent.EventText:
		fmt.Fprint(p.w, ev.Text)
		p.midLine = !strings.HasSuffix(ev.Text, "\n")
	case agent.EventToolCall:
		p.line("→ %s %s", ev.Call.Name, clip(string(ev.Call.Args), 120))
	case agent.EventToolResult:
		mark := "←"
		if ev.Result.IsError {
			mark = "✗"
		}
		p.line("%s %s: %s", mark, ev.Result.Name, clip(ev.Result.Content, 200))
	case agent.EventPause:
		p.paused = true
		p.line("? %s", ev.Pause.Question)
		if ev.Pause.Suggested != "" {
			p.line("  (suggested: %s)", ev.Pause.Suggested)
		}
	case agent.EventNextActions:
		p.line("suggestions: %s", strings.Join(ev.Actions, " · "))
	case agent.EventError:
		p.endLine()
		fmt.Fprintf(p.errw, "quiver: %s\n", ev.Error)
	case agent.EventDone:
		p.endLine()
	}
}

func (p *chatPrinter) line(format string, args ...any) {
	p.endLine()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *chatPrinter) endLine() {
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
}

// promptText is the interactive prompt: an answer prompt after a pause.
func (p *chatPrinter) promptText() string {
	if p.paused {
		p.paused = false
		return "answer> "
	}
	return "> "
}

// clip shortens s to n characters on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
