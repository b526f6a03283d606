package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/internal/nodetools"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// startEverything runs the reference server @modelcontextprotocol/server-
// everything over Streamable HTTP on a loopback port and returns its
// endpoint once it reports listening. It stops with the test.
func startEverything(t *testing.T) string {
	t.Helper()
	x := nodetools.Require(t)
	for range 3 { // a port picked free can be taken before the server binds it
		if url, ok := tryEverything(t, x); ok {
			return url
		}
	}
	t.Fatal("server-everything did not start")
	return ""
}

// tryEverything starts the server on a free port; ok is false when the
// port was taken meanwhile.
func tryEverything(t *testing.T, x nodetools.Tools) (url string, ok bool) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	// The deadline only ends a hang: readiness is the server's own line.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := x.Command(ctx, "mcp-server-everything", "streamableHttp")
	cmd.Env = append(cmd.Env, fmt.Sprintf("PORT=%d", port))
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	var log strings.Builder
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !signalled && strings.Contains(sc.Text(), fmt.Sprintf("listening on port %d", port)) {
				ready <- true
				signalled = true
			}
		}
		if !signalled {
			ready <- false
		}
	}()
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		cancel()
	}
	select {
	case ok := <-ready:
		if !ok {
			stop()
			if strings.Contains(log.String(), "already in use") {
				return "", false
			}
			t.Fatalf("server-everything exited before listening:\n%s", log.String())
		}
	case <-ctx.Done():
		stop()
		t.Fatal("server-everything never reported listening")
	}
	t.Cleanup(stop)
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port), true
}

// TestEverythingEndToEnd registers the reference server, discovers its
// tools, calls echo and get-sum under their wire names through NewToolset,
// Select and dispatch, and runs a Quiver turn whose model calls echo.
// Every tool it lists is offered, under a name every provider accepts.
func TestEverythingEndToEnd(t *testing.T) {
	url := startEverything(t)
	e := newEnv(t, nil)
	ctx := context.Background()

	rec, err := e.regs.Add(ctx, org, e.mode, Registration{Name: "everything", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"echo", "get-sum", "get-tiny-image"} {
		if !slices.Contains(rec.Tools, want) {
			t.Errorf("discovered %v, want %s among them", rec.Tools, want)
		}
	}
	if e.list()[0].Tools == nil {
		t.Error("no snapshot stored")
	}

	tr := e.overlay(builtins())
	ts := builtins().With(tr.Overlay).Select(facts("everything/*"))
	for _, want := range []string{"everything__echo", "everything__get-sum"} {
		if _, ok := ts.Lookup(want); !ok {
			t.Fatalf("%s not offered; toolset %v, excluded %v", want, ts.Names(), ts.Excluded())
		}
	}
	if len(tr.Overlay.Dropped) != 0 || len(ts.Names()) != len(rec.Tools)+1 {
		t.Errorf("discovered %v; offered %v, dropped %v", rec.Tools, ts.Names(), tr.Overlay.Dropped)
	}
	d := dispatch.New(dispatch.Config{Results: e.st, Logger: slog.New(slog.DiscardHandler)})
	dt := dispatch.Turn{Toolset: ts, Scope: tool.Scope{OrgID: org, UserID: "u1", ConversationID: "c1", TurnID: "t1"}}
	calls := []struct {
		name, args, want string
	}{
		{"everything__echo", `{"message":"xin chào"}`, "Echo: xin chào"},
		{"everything__get-sum", `{"a":2,"b":40}`, "42"},
		{"everything__get-tiny-image", `{}`, "[image: image/png, "},
	}
	for _, c := range calls {
		res, err := d.Call(ctx, dt, dispatch.Call{ID: "call-" + c.name, Name: c.name, Args: json.RawMessage(c.args)})
		if err != nil || res.IsError || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s(%s) = %+v, %v; want content with %q", c.name, c.args, res, err, c.want)
		}
	}
	res, err := d.Call(ctx, dt, dispatch.Call{ID: "bad", Name: "everything__get-sum", Args: json.RawMessage(`{"a":"two"}`)})
	if err != nil || !res.IsError {
		t.Errorf("get-sum with bad arguments = %+v, %v; want an error result", res, err)
	}

	t.Run("turn", func(t *testing.T) {
		f := turn.Facts{
			TurnID: "turn1",
			Start:  t0,
			Caller: turn.Caller{UserID: "u1", DisplayName: "Ana", Organisation: "Acme", Timezone: "UTC"},
			Place:  turn.Place{OrgID: org, ConversationID: "conv1"},
			Agent:  turn.Agent{Name: "helper", Prompt: tmpl.Author("Be brief."), Allow: []string{"everything/echo"}},
			Model:  turn.Model{Provider: "fake", Name: "scripted", Caps: turn.Capabilities{Tools: true}},
		}
		ts := builtins().With(e.overlay(builtins()).Overlay).Select(f)
		req, err := prompt.Assemble(f, ts)
		if err != nil {
			t.Fatal(err)
		}
		model := llmtest.NewModel(
			llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("tc1", "everything__echo", map[string]string{"message": "from the model"})}},
			llmtest.Reply{Text: []string{"The server said it back."}},
		)
		runner := agent.New(agent.Config{Store: e.st, Dispatcher: d, Now: e.clock.Now, Logger: slog.New(slog.DiscardHandler)})
		out, err := runner.Run(ctx, agent.Start{Facts: f, Toolset: ts, Request: req, Model: model, Message: "say it back"}, func(agent.Event) {})
		if err != nil || out.Stop != agent.StopAnswer {
			t.Fatalf("Run = %+v, %v", out, err)
		}
		var declared []string
		for _, d := range model.Requests()[0].Tools {
			declared = append(declared, d.Name)
		}
		if !slices.Contains(declared, "everything__echo") {
			t.Errorf("the model was offered %v, want everything__echo among them", declared)
		}
		msgs, err := e.st.ListMessages(ctx, org, "conv1", 0)
		if err != nil {
			t.Fatal(err)
		}
		var transcript strings.Builder
		for _, m := range msgs {
			fmt.Fprintf(&transcript, "%s %s: %s\n", m.Role, m.ToolName, m.Content)
		}
		wantContains(t, "transcript", transcript.String(), "tool everything__echo: Echo: from the model", "The server said it back.")
	})
}
