package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/turn"
)

// offeringAgent runs on openai:m and offers ollama:qwen3:8b and down:x.
var offeringAgent = engine.Agent{
	Agent: turn.Agent{Name: "helper", Prompt: tmpl.Author("You help.")},
	Model: turn.Model{Provider: "openai", Name: "m", Caps: turn.Capabilities{Tools: true}},
	Models: []turn.Model{
		{Provider: "ollama", Name: "qwen3:8b", Caps: turn.Capabilities{Tools: true}},
		{Provider: "down", Name: "x", Caps: turn.Capabilities{Tools: true}},
	},
}

// agents is an engine.AgentSource of offeringAgent alone.
type agents struct{}

func (agents) Agent(_ context.Context, _, name string) (engine.Agent, error) {
	if name != "helper" {
		return engine.Agent{}, store.ErrNotFound
	}
	return offeringAgent, nil
}

// opener records the models it is asked for and opens a scripted model
// for each, except provider "down"'s, which it cannot open (saying so as
// providers.ConnectError does, "no model connected: ...").
type opener struct {
	mu     sync.Mutex
	opened []string
}

func (o *opener) Open(_ context.Context, m turn.Model) (llm.Model, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.opened = append(o.opened, engine.Ref(m))
	if m.Provider == "down" {
		return nil, errors.New("no model connected: down:x needs DOWN_API_KEY")
	}
	mod := llmtest.NewModel()
	mod.ModelRef = engine.Ref(m)
	return mod, nil
}

// newModelEngine is an engine with offeringAgent and the opener.
func newModelEngine(t *testing.T) (*engine.Engine, *sqlite.Store, *opener) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	o := &opener{}
	eng := engine.New(engine.Config{
		Repos:   engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st},
		Runtime: engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public", Models: o}),
		Agents:  agents{}, Now: func() time.Time { return start },
	})
	return eng, st, o
}

// storedRequest is ana's message in conv, with the stored agent.
func storedRequest(conv string) engine.Request {
	return engine.Request{Caller: turn.Caller{UserID: "ana"}, OrgID: "acme", ConversationID: conv, Message: "hello"}
}

// TestConversationModelRunsTheTurn: a stored conversation's choice is
// the model the turn opens and its facts name, while the agent offers
// it; once the agent no longer does, the turn runs on the agent's own.
func TestConversationModelRunsTheTurn(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, chosen, want string }{
		{"chosen", "ollama:qwen3:8b", "ollama:qwen3:8b"},
		{"none", "", "openai:m"},
		{"no longer offered", "gone:y", "openai:m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng, st, o := newModelEngine(t)
			if err := st.PutConversation(ctx, store.Conversation{ID: "conv_a", OrgID: "acme", UserID: "ana", Agent: "helper", Model: tc.chosen, CreatedAt: start, UpdatedAt: start}); err != nil {
				t.Fatal(err)
			}
			c, err := eng.Collect(ctx, storedRequest("conv_a"))
			if err != nil {
				t.Fatal(err)
			}
			f := c.Facts()
			if got := engine.Ref(f.Model); got != tc.want || !slices.Equal(o.opened, []string{tc.want}) {
				t.Errorf("facts' model %q, opened %v; want %s", got, o.opened, tc.want)
			}
		})
	}
}

// TestFirstMessageModel: a conversation not stored yet runs on the
// request's ModelRef when the agent offers it, refuses one it does not,
// and keeps a stored conversation's own choice over ModelRef and its own
// agent over AgentName.
func TestFirstMessageModel(t *testing.T) {
	ctx := context.Background()
	eng, st, o := newModelEngine(t)
	r := storedRequest("conv_new")
	r.Create, r.AgentName, r.ModelRef = true, "helper", "ollama:qwen3:8b"
	c, err := eng.Collect(ctx, r)
	if err != nil || engine.Ref(c.Facts().Model) != "ollama:qwen3:8b" {
		t.Fatalf("first message: %v, model %v", err, c)
	}
	r.ModelRef = "gone:y"
	var ie *engine.InputError
	if _, err := eng.Collect(ctx, r); !errors.As(err, &ie) || !strings.Contains(ie.Msg, `model "gone:y" is not one the agent "helper" offers`) {
		t.Errorf("a model the agent does not offer: %v", err)
	}
	if err := st.PutConversation(ctx, store.Conversation{ID: "conv_a", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	o.opened = nil
	r = storedRequest("conv_a")
	r.Create, r.AgentName, r.ModelRef = true, "someone-else", "ollama:qwen3:8b"
	c, err = eng.Collect(ctx, r)
	if err != nil || c.Facts().Agent.Name != "helper" || engine.Ref(c.Facts().Model) != "openai:m" {
		t.Errorf("a stored conversation: %v; want its agent helper on its model openai:m", err)
	}
}

// TestModelChoices lists the agent's own model first, then the ones it
// offers, each with whether it opens; CheckModel agrees.
func TestModelChoices(t *testing.T) {
	ctx := context.Background()
	eng, _, _ := newModelEngine(t)
	got, err := eng.ModelChoices(ctx, "acme", "helper")
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.ModelChoice{
		{Ref: "openai:m", Default: true, Connected: true},
		{Ref: "ollama:qwen3:8b", Connected: true},
		{Ref: "down:x", Help: "no model is connected: down:x needs DOWN_API_KEY"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("choices (-want +got):\n%s", d)
	}
	for ref, wantErr := range map[string]string{
		"openai:m":        "",
		"ollama:qwen3:8b": "",
		"down:x":          "no model is connected: down:x needs DOWN_API_KEY",
		"other:z":         `model "other:z" is not one the agent "helper" offers`,
	} {
		err := eng.CheckModel(ctx, "acme", "helper", ref)
		var ie *engine.InputError
		if wantErr == "" && err != nil || wantErr != "" && (!errors.As(err, &ie) || !strings.Contains(ie.Msg, wantErr)) {
			t.Errorf("CheckModel(%s) = %v, want %q", ref, err, wantErr)
		}
	}
	if _, err := eng.ModelChoices(ctx, "acme", "nope"); !errors.As(err, new(*engine.InputError)) {
		t.Errorf("an unknown agent's choices: %v, want an InputError", err)
	}
}

// TestEmptyMessageRefused: a turn that runs refuses a message that is
// empty once trimmed, before reading anything; a dry run (the inspector)
// takes one.
func TestEmptyMessageRefused(t *testing.T) {
	ctx := context.Background()
	eng, _, o := newModelEngine(t)
	r := storedRequest("conv_new")
	r.Create, r.AgentName = true, "helper"
	for _, msg := range []string{"", "   ", "\n\t \r\n"} {
		r.Message = msg
		var ie *engine.InputError
		if _, err := eng.Collect(ctx, r); !errors.As(err, &ie) || ie.Msg != "the message is empty: write something to send" {
			t.Errorf("message %q: %v", msg, err)
		}
	}
	if len(o.opened) != 0 {
		t.Errorf("a refused message opened %v", o.opened)
	}
	r.Message, r.DryRun = "  ", true
	if _, err := eng.Collect(ctx, r); err != nil {
		t.Errorf("a dry run of an empty message: %v", err)
	}
}

// TestNoModelSaysItOnce: the reason a ModelOpener gives, which often
// starts "no model connected", follows "no model is connected" once.
func TestNoModelSaysItOnce(t *testing.T) {
	for in, want := range map[string]string{
		"no model connected: set OPENAI_API_KEY": "no model is connected: set OPENAI_API_KEY",
		"no openai key":                          "no model is connected: no openai key",
	} {
		if got := engine.NoModel(errors.New(in)); got != want {
			t.Errorf("NoModel(%q) = %q, want %q", in, got, want)
		}
	}
	if got := engine.NoModel(nil); got != "no model is connected" {
		t.Errorf("NoModel(nil) = %q", got)
	}
}
