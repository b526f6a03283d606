// Package terminal is the conversation that happens in a terminal
// ("quiver chat"): a Printer that shows a turn's events as they arrive,
// and Loop, which reads one message after another from standard input
// and hands each to a turn.
package terminal

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quiverhq/quiver/agent"
)

// MaxLine is the longest message Loop reads, in bytes; a longer line
// stops the loop with bufio.ErrTooLong.
const MaxLine = 1 << 20

// Printer shows a turn's events: as one JSON object per line, or as text
// with the answer streamed to Out and tool activity, pauses and
// suggestions beside it, and errors on Err. The zero value is not
// usable: set Out and Err.
type Printer struct {
	Out, Err io.Writer
	// JSON prints every event as one JSON line on Out.
	JSON    bool
	midLine bool
	paused  bool
}

// Event shows one event.
func (p *Printer) Event(ev agent.Event) {
	if p.JSON {
		if b, err := json.Marshal(ev); err == nil {
			fmt.Fprintf(p.Out, "%s\n", b)
		}
		return
	}
	switch ev.Kind {
	case agent.EventText:
		fmt.Fprint(p.Out, ev.Text)
		p.midLine = !strings.HasSuffix(ev.Text, "\n")
	case agent.EventToolCall:
		p.line("→ %s %s", ev.Call.Name, Clip(string(ev.Call.Args), 120))
	case agent.EventToolResult:
		mark := "←"
		if ev.Result.IsError {
			mark = "✗"
		}
		p.line("%s %s: %s", mark, ev.Result.Name, Clip(ev.Result.Content, 200))
	case agent.EventPause:
		p.paused = true
		p.line("? %s", ev.Pause.Question)
		if ev.Pause.Suggested != "" {
			p.line("  (suggested: %s)", ev.Pause.Suggested)
		}
	case agent.EventNextActions:
		p.line("suggestions: %s", strings.Join(ev.Actions, " · "))
	case agent.EventChecklist:
		if len(ev.Checklist.Items) == 0 {
			p.line("checklist: cleared")
			break
		}
		p.line("checklist:")
		for _, it := range ev.Checklist.Items {
			p.line("  %s %s", it.Mark(), it.Text)
		}
	case agent.EventMessages:
		for _, c := range ev.Messages {
			p.line("~ %s %s %s", c.Action, c.Message, c.Emoji+c.Thread)
		}
	case agent.EventError:
		p.endLine()
		fmt.Fprintf(p.Err, "quiver: %s\n", ev.Error)
	case agent.EventDone:
		p.endLine()
	}
}

func (p *Printer) line(format string, args ...any) {
	p.endLine()
	fmt.Fprintf(p.Out, format+"\n", args...)
}

func (p *Printer) endLine() {
	if p.midLine {
		fmt.Fprintln(p.Out)
		p.midLine = false
	}
}

// prompt is the interactive prompt: an answer prompt after a pause.
func (p *Printer) prompt() string {
	if p.paused {
		p.paused = false
		return "answer> "
	}
	return "> "
}

// Clip shortens s to n characters on one line, with "…" when cut.
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Loop reads messages from in until its end and passes each to say, in
// order: on a terminal (and not p.JSON) after the banner on p.Err and a
// prompt on p.Out; otherwise one message per line, silently. Blank lines
// are skipped. An error from say stops the loop unless keep reports it
// harmless (a turn that ended in an error result, already shown); so
// does ctx ending.
func Loop(ctx context.Context, in io.Reader, p *Printer, banner string, say func(context.Context, string) error, keep func(error) bool) error {
	tty := isTerminal(in) && !p.JSON
	if tty {
		fmt.Fprintln(p.Err, banner)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for {
		if tty {
			fmt.Fprint(p.Out, p.prompt())
		}
		if !sc.Scan() {
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := say(ctx, line); err != nil && !keep(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
