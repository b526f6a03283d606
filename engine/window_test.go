package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestInspectShowsTheCut: the inspector shows how the next turn's first
// model call fits the model's context window — what it leaves out and the
// marker the model sees — and, for a stored turn, the cut its first call
// made; a conversation that fits shows no cut.
func TestInspectShowsTheCut(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	quiet := slog.New(slog.DiscardHandler)
	disp := dispatch.New(dispatch.Config{Results: st, Logger: quiet})
	win := agent.Window{Tokens: 16_000, Reserve: 1000}
	eng := engine.New(engine.Config{
		Repos:      engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st},
		Runtime:    engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public"}),
		Dispatcher: disp,
		Runner: agent.New(agent.Config{Store: st, Dispatcher: disp, Logger: quiet, Now: func() time.Time { return start },
			Windows: func(string) agent.Window { return win }}),
		Now: func() time.Time { return start },
	})
	if err := st.PutConversation(ctx, store.Conversation{ID: "conv_a", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	r := request("ana", "conv_a", false)
	ins, err := eng.Inspect(ctx, r, "")
	if err != nil {
		t.Fatal(err)
	}
	if h := ins.History; h == nil || h.Dropped != 0 || h.Marker != "" || h.Window != win || h.Sent != 2 {
		t.Fatalf("a conversation that fits: history %+v", ins.History)
	}
	// A draft is one call, the cut shown, and has no turn id of its own.
	if rp := ins.Replay; rp == nil || len(rp.Calls) != 1 || rp.Calls[0].Cut != *ins.History || rp.Calls[0].End != 2 || ins.Steps != 0 {
		t.Errorf("the draft's replay %+v", ins.Replay)
	}
	if id := ins.Start.Facts.TurnID; id != "" {
		t.Errorf("the draft has the turn id %q; a draft has none", id)
	}
	for i := range 30 {
		turnID := fmt.Sprintf("t%02d", i)
		for _, m := range []store.Message{
			{Role: "context", Content: "ctx"},
			{Role: "user", Content: fmt.Sprintf("question %d %s", i, strings.Repeat("q", 1000))},
			{Role: "assistant", Content: strings.Repeat("a", 1000)},
		} {
			m.ConversationID, m.TurnID, m.CreatedAt = "conv_a", turnID, start
			if _, err := st.AppendMessage(ctx, "acme", m); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.PutTurn(ctx, store.Turn{ID: turnID, OrgID: "acme", UserID: "ana", ConversationID: "conv_a", Agent: "helper", Model: "openai:m", Status: store.TurnDone, StartedAt: start}); err != nil {
			t.Fatal(err)
		}
	}
	ins, err = eng.Inspect(ctx, r, "")
	if err != nil {
		t.Fatal(err)
	}
	h := ins.History
	if h == nil || h.Dropped == 0 || !strings.Contains(h.Marker, fmt.Sprintf("[%d earlier messages", h.Dropped)) || h.Tokens > win.Tokens-win.Reserve {
		t.Fatalf("history %+v", h)
	}
	if rep := ins.Report(); rep.History == nil || *rep.History != *h {
		t.Errorf("report's history %+v, want %+v", rep.History, h)
	}
	var text strings.Builder
	ins.Report().WriteText(&text)
	if !strings.Contains(text.String(), fmt.Sprintf("── history: %d messages sent, %d left out", h.Sent, h.Dropped)) || !strings.Contains(text.String(), h.Marker) {
		t.Errorf("text report lacks the cut:\n%s", text.String())
	}
	// A stored early turn's first call fitted whole; a late one's did not.
	early, err := eng.Inspect(ctx, r, "t03")
	if err != nil {
		t.Fatal(err)
	}
	late, err := eng.Inspect(ctx, r, "t29")
	if err != nil {
		t.Fatal(err)
	}
	if early.History.Dropped != 0 || late.History.Dropped == 0 || late.History.Dropped > h.Dropped {
		t.Errorf("stored turns: early %+v, late %+v (now %+v)", early.History, late.History, h)
	}
	// Its call, replayed, is that cut and ends before its reply.
	if rp := late.Replay; rp == nil || len(rp.Calls) != 1 || rp.Calls[0].Cut != *late.History ||
		rp.Messages[rp.Calls[0].End].Text != strings.Repeat("a", 1000) || late.Start.Facts.TurnID != "t29" {
		t.Errorf("the stored turn's replay %+v (turn %q)", late.Replay, late.Start.Facts.TurnID)
	}
}
