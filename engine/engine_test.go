package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/turn"
)

var start = time.Date(2026, 11, 29, 23, 3, 0, 0, time.UTC)

// newEngine is an engine over a real store with the built-in catalog.
func newEngine(t *testing.T) (*engine.Engine, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	n := 0
	eng := engine.New(engine.Config{
		Repos:   engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st},
		Runtime: engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public", Switches: map[string]bool{"web_search": false}}),
		Now:     func() time.Time { return start },
		NewID:   func(prefix string) string { n++; return prefix + string(rune('0'+n)) },
	})
	return eng, st
}

func request(user, conv string, create bool) engine.Request {
	return engine.Request{
		Caller: turn.Caller{UserID: user, DisplayName: user}, OrgID: "acme", ConversationID: conv, Create: create,
		Agent: &engine.Agent{Agent: turn.Agent{Name: "helper", Prompt: tmpl.Author("You help."), Switches: map[string]bool{"emoji_usage": true}},
			Model: turn.Model{Provider: "openai", Name: "m", Caps: turn.Capabilities{Tools: true}}},
		Message: "hello", DryRun: true,
	}
}

// TestCollectOwnership: another user's conversation is as absent as a
// missing one; a missing one is collected only with Create.
func TestCollectOwnership(t *testing.T) {
	ctx := context.Background()
	eng, st := newEngine(t)
	if err := st.PutConversation(ctx, store.Conversation{ID: "conv_a", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		r    engine.Request
		want error
	}{
		{"owner", request("ana", "conv_a", false), nil},
		{"another user", request("bo", "conv_a", false), engine.ErrNoConversation},
		{"another user, create", request("bo", "conv_a", true), engine.ErrNoConversation},
		{"missing", request("ana", "conv_x", false), engine.ErrNoConversation},
		{"missing, create", request("ana", "conv_x", true), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eng.Collect(ctx, tc.r)
			if !errors.Is(err, tc.want) {
				t.Errorf("Collect: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestCollectedFactsAreFinal: the facts carry the turn id, the switches
// in force (the organisation's under the agent's) and the network mode,
// and Prepare declares from them.
func TestCollectedFactsAreFinal(t *testing.T) {
	ctx := context.Background()
	eng, _ := newEngine(t)
	c, err := eng.Collect(ctx, request("ana", "conv_new", true))
	if err != nil {
		t.Fatal(err)
	}
	f := c.Facts()
	if f.TurnID != "turn_1" || f.Network != "public" || !f.Start.Equal(start) {
		t.Errorf("facts: turn %q, network %q, start %v", f.TurnID, f.Network, f.Start)
	}
	if on, set := f.Agent.Switches["web_search"]; !set || on || !f.Agent.Switches["emoji_usage"] {
		t.Errorf("switches in force: %v, want the organisation's web_search off under the agent's emoji_usage on", f.Agent.Switches)
	}
	p, err := eng.Prepare(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if p.Resume || p.Start.Facts.TurnID != "turn_1" || len(p.Start.Request.Tools) == 0 {
		t.Errorf("prepared: resume %v, turn %q, %d tools", p.Resume, p.Start.Facts.TurnID, len(p.Start.Request.Tools))
	}
}

// TestCollectedRequest: a collected turn and a session give back the
// request they were built from, so a surface need not build it twice.
func TestCollectedRequest(t *testing.T) {
	ctx := context.Background()
	eng, _ := newEngine(t)
	r := request("ana", "conv_new", true)
	r.TurnID = "turn_given"
	c, err := eng.Collect(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	s, err := eng.Select(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]engine.Request{"Collect": c.Request(), "Select": s.Request()} {
		if got.TurnID != "turn_given" || got.ConversationID != "conv_new" || got.Caller.UserID != "ana" || got.Agent != r.Agent {
			t.Errorf("%s: Request() = %+v, want the request given", name, got)
		}
	}
}

// TestConversationNeedsRepositories: an engine built without the
// repositories refuses a turn in a named conversation rather than skip
// the ownership check.
func TestConversationNeedsRepositories(t *testing.T) {
	eng := engine.New(engine.Config{Runtime: engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{})})})
	if _, err := eng.Collect(context.Background(), request("ana", "conv_a", false)); err == nil {
		t.Error("an engine without repositories collected a turn in a named conversation")
	}
	if _, err := eng.Collect(context.Background(), request("ana", "", false)); err != nil {
		t.Errorf("a turn of an agent alone: %v", err)
	}
}

type attachments map[string]int

func (a attachments) CountAttachments(_ context.Context, orgID, conv string) (int, error) {
	return a[orgID+"/"+conv], nil
}

type knowledge map[string]bool

func (k knowledge) HasKnowledge(_ context.Context, orgID, agent string) (bool, error) {
	return k[orgID+"/"+agent], nil
}

// TestCollectFillsAttachedFacts: the facts of what is attached to the
// conversation and the agent come from their sources, once, at collect,
// and only for the turn's own organisation, conversation and agent.
func TestCollectFillsAttachedFacts(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eng := engine.New(engine.Config{
		Repos:       engine.Repositories{Conversations: st, Messages: st, Turns: st},
		Runtime:     engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{})}),
		Attachments: attachments{"acme/conv_a": 2, "other/conv_a": 9},
		Knowledge:   knowledge{"acme/helper": true, "acme/other": false},
	})
	c, err := eng.Collect(ctx, request("ana", "conv_a", true))
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Facts(); f.Attachments != 2 || !f.Knowledge {
		t.Errorf("attachments %d, knowledge %v; want 2 and true", f.Attachments, f.Knowledge)
	}
	c, err = eng.Collect(ctx, request("ana", "conv_b", true))
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Facts(); f.Attachments != 0 {
		t.Errorf("another conversation has %d attachments, want 0", f.Attachments)
	}
	// A session of calls made by hand (quiver call, mcp serve) reads them
	// too, so read_document is declared for the agent's knowledge.
	s, err := eng.Select(ctx, request("ana", "conv_b", true))
	if err != nil {
		t.Fatal(err)
	}
	if f := s.Facts(); !f.Knowledge || f.Attachments != 0 {
		t.Errorf("Select: attachments %d, knowledge %v; want 0 and true", f.Attachments, f.Knowledge)
	}
}
