package providers_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin/calc"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/llm/textproto"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

func TestEffective(t *testing.T) {
	all := turn.Capabilities{Tools: true, ParallelTools: true, Vision: true, Video: true, StructuredOutput: true}
	cases := []struct {
		name               string
		declared, reported turn.Capabilities
		want               turn.Capabilities
	}{
		{"both everything", all, all, all},
		{"model reports nothing", all, turn.Capabilities{}, turn.Capabilities{}},
		{"agent declares nothing", turn.Capabilities{}, all, turn.Capabilities{}},
		{"agent declares tools, model cannot take them",
			turn.Capabilities{Tools: true, ParallelTools: true, Vision: true},
			turn.Capabilities{Vision: true},
			turn.Capabilities{Vision: true}},
		{"model defaults do not turn on what the agent left off",
			turn.Capabilities{Tools: true},
			turn.Capabilities{Tools: true, ParallelTools: true, Vision: true},
			turn.Capabilities{Tools: true}},
		{"each capability on its own",
			turn.Capabilities{Tools: true, Vision: true, Video: true},
			turn.Capabilities{Tools: true, Video: true, StructuredOutput: true},
			turn.Capabilities{Tools: true, Video: true}},
		{"parallel tool calls need tools",
			turn.Capabilities{ParallelTools: true},
			turn.Capabilities{ParallelTools: true},
			turn.Capabilities{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &llmtest.Model{ModelRef: "fake:m", Caps: tc.reported}
			if d := cmp.Diff(tc.want, providers.Effective(tc.declared, m)); d != "" {
				t.Errorf("Effective (-want +got):\n%s", d)
			}
		})
	}
}

// TestEffectiveNoModel: with no model opened (a dry run), the declaration
// stands.
func TestEffectiveNoModel(t *testing.T) {
	declared := turn.Capabilities{Tools: true, Vision: true}
	if got := providers.Effective(declared, nil); got != declared {
		t.Errorf("Effective(declared, nil) = %+v, want %+v", got, declared)
	}
}

// TestEffectiveTextProtocol: a model whose endpoint takes no native tools
// keeps the agent's tools once wrapped with the text protocol, which
// reports them.
func TestEffectiveTextProtocol(t *testing.T) {
	inner := &llmtest.Model{ModelRef: "lmstudio:tiny"}
	got := providers.Effective(turn.Capabilities{Tools: true}, textproto.Wrap(inner))
	if !got.Tools {
		t.Errorf("Effective = %+v, want tools through the text protocol", got)
	}
}

// TestModelWithoutToolsGetsNoDeclarations runs a whole turn, facts to
// model request, for an agent that declares tools and allows one, on an
// opened model that reports no tool support: the turn's facts combine the
// two, selection leaves every tool out with the model as the reason, and
// the request the model receives declares no tool.
func TestModelWithoutToolsGetsNoDeclarations(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat := registry.New()
	cat.Register(calc.Tool(), tool.New(tool.Spec{Name: "lookup", Description: "Read-only lookup."},
		func(context.Context, tool.Scope, struct{}) (string, error) { return "found", nil }))
	model := llmtest.NewModel(llmtest.Reply{Text: []string{"No tools here."}})
	model.ModelRef, model.Caps = "fake:plain", turn.Capabilities{}

	f := turn.Facts{
		TurnID: "turn_1", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Caller: turn.Caller{UserID: "u1", DisplayName: "Ana"},
		Place:  turn.Place{OrgID: "o1", ConversationID: "c1"},
		Agent:  turn.Agent{Name: "helper", Prompt: tmpl.Author("Be brief."), Allow: []string{"lookup"}},
		Model:  turn.Model{Provider: "fake", Name: "plain", Caps: turn.Capabilities{Tools: true, ParallelTools: true}},
	}
	f.Model.Caps = providers.Effective(f.Model.Caps, model)
	ts := cat.Select(f)
	if ts.Len() != 0 {
		t.Fatalf("toolset %v, want none", ts.Names())
	}
	for _, e := range ts.Excluded() {
		if !strings.Contains(e.Reason, "does not support tool calling") {
			t.Errorf("%s left out for %q, want the model's lack of tool support", e.Name, e.Reason)
		}
	}
	if len(ts.Excluded()) != 2 {
		t.Errorf("exclusions %+v, want calculate and lookup", ts.Excluded())
	}
	req, err := prompt.Assemble(f, ts)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	runner := agent.New(agent.Config{
		Store: st, Dispatcher: dispatch.New(dispatch.Config{Results: st, Logger: quiet}), Logger: quiet,
		Now: func() time.Time { return f.Start },
	})
	out, err := runner.Run(ctx, agent.Start{Facts: f, Toolset: ts, Request: req, Model: model, Message: "what is 2+2?"}, func(agent.Event) {})
	if err != nil || out.Stop != agent.StopAnswer {
		t.Fatalf("Run: %+v, %v", out, err)
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	if len(reqs[0].Tools) != 0 {
		t.Errorf("the model got %d tool declarations, want none: %v", len(reqs[0].Tools), toolNames(reqs[0].Tools))
	}
}

func toolNames(ds []llm.ToolDef) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}
