package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tmpl"
)

// TestRespond: one call collects, prepares and runs the turn: the prompt
// template's warnings reach warn before any event, the answer streams to
// emit and the turn is recorded; another user's conversation is refused
// as Collect refuses it, with nothing run.
func TestRespond(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	quiet := slog.New(slog.DiscardHandler)
	disp := dispatch.New(dispatch.Config{Results: st, Logger: quiet, Now: func() time.Time { return start }})
	eng := engine.New(engine.Config{
		Repos:      engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st},
		Runtime:    engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public"}),
		Dispatcher: disp,
		Runner:     agent.New(agent.Config{Store: st, Dispatcher: disp, Logger: quiet, Now: func() time.Time { return start }}),
		Now:        func() time.Time { return start },
	})
	if err := st.PutConversation(ctx, store.Conversation{ID: "conv_a", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	r := request("ana", "conv_a", false)
	r.DryRun = false
	r.Agent.Agent.Prompt = tmpl.Author("You help.{{/if}}")
	r.Model = llmtest.NewModel(llmtest.Reply{Text: []string{"Hello, ", "Ana."}})
	var seen []string
	warn := func(w string) { seen = append(seen, "warning "+w) }
	emit := func(ev agent.Event) {
		if ev.Kind == agent.EventText {
			seen = append(seen, "text "+ev.Text)
		}
	}
	out, err := eng.Respond(ctx, r, warn, emit)
	if err != nil || out.Stop != agent.StopAnswer {
		t.Fatalf("Respond = %+v, %v", out, err)
	}
	want := []string{"warning line 1: stray {{/if}} outside any block; removed", "text Hello, ", "text Ana."}
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("warnings and events (-want +got):\n%s", d)
	}
	msgs, err := st.ListMessages(ctx, "acme", "conv_a", 0)
	if err != nil || len(msgs) == 0 || msgs[len(msgs)-1].Role != "assistant" || msgs[len(msgs)-1].Content != "Hello, Ana." {
		t.Errorf("recorded %+v, %v; want the answer last", msgs, err)
	}

	bo := request("bo", "conv_a", false)
	bo.DryRun, bo.Model = false, llmtest.NewModel()
	if _, err := eng.Respond(ctx, bo, nil, emit); !errors.Is(err, engine.ErrNoConversation) {
		t.Errorf("another user's conversation: %v, want ErrNoConversation", err)
	}
}
