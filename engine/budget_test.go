package engine_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/turn"
)

// budgetClock is a clock a test moves.
type budgetClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *budgetClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *budgetClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// budgetModel answers every call with a calculate call costing 60 tokens
// (40 in, 20 out), so a turn goes on until something stops it; the first
// hold calls wait until all of them are in flight at once.
type budgetModel struct {
	calls   atomic.Int64
	hold    int64
	arrived chan struct{}
	release chan struct{}
}

func newBudgetModel(hold int) *budgetModel {
	return &budgetModel{hold: int64(hold), arrived: make(chan struct{}, hold), release: make(chan struct{})}
}

func (m *budgetModel) Ref() string                     { return "fake:scripted" }
func (m *budgetModel) Capabilities() turn.Capabilities { return turn.Capabilities{Tools: true} }
func (m *budgetModel) CheckTool(llm.ToolDef) error     { return nil }
func (m *budgetModel) Stream(ctx context.Context, _ llm.Request) iter.Seq2[llm.Event, error] {
	n := m.calls.Add(1)
	reply := llmtest.Reply{
		ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("call_", n), Name: "calculate", Args: []byte(`{"expression":"1+1"}`)}},
		Usage:     llm.Usage{InputTokens: 40, OutputTokens: 20},
	}
	return func(yield func(llm.Event, error) bool) {
		if n <= m.hold {
			m.arrived <- struct{}{}
			select {
			case <-m.release:
			case <-ctx.Done():
				yield(llm.Event{}, ctx.Err())
				return
			}
		}
		for ev, err := range llmtest.Events(reply) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// budgetEngine is an engine over a real store whose turns are held to
// their budgets, on clock.
func budgetEngine(t *testing.T, clock *budgetClock) (*engine.Engine, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	quiet := slog.New(slog.DiscardHandler)
	disp := dispatch.New(dispatch.Config{Results: st, Logger: quiet, Now: clock.Now})
	var n atomic.Int64
	eng := engine.New(engine.Config{
		Repos:      engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st},
		Runtime:    engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public"}),
		Budgets:    st,
		Dispatcher: disp,
		Runner: agent.New(agent.Config{Store: st, Dispatcher: disp, Logger: quiet, Now: clock.Now, MaxSteps: 50,
			Prices: map[string]agent.Price{"fake:scripted": {Input: 1, Output: 1}}, // a token costs a micro
			Budget: budget.Guard{Store: st, Now: clock.Now}}),
		Now:   clock.Now,
		NewID: func(prefix string) string { return fmt.Sprint(prefix, n.Add(1)) },
	})
	return eng, st
}

// budgetRequest is ana's first message in conv, answered by m.
func budgetRequest(user, conv string, m llm.Model) engine.Request {
	r := request(user, conv, true)
	r.DryRun, r.Model = false, m
	return r
}

func putBudget(t *testing.T, st store.Budgets, b store.Budget) {
	t.Helper()
	b.OrgID, b.UpdatedAt = "acme", start
	if err := st.PutBudget(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetConcurrentTurnsOvershootByOneCallEach: four turns of one
// person start together under a budget of 60 tokens, each model call
// costing 60. All four first calls are made (the spend was 0 when each
// checked), none a second: each turn's own first call uses the whole
// budget, so in whatever order the calls finish, each turn stops with
// StopBudget before its next call and the overshoot is one call per
// concurrent turn. (Under a budget of 100 a turn finishing first saw 60
// of 100 and rightly called again.) A turn
// started after that never reaches the model, is refused with the
// budget's error and writes nothing.
func TestBudgetConcurrentTurnsOvershootByOneCallEach(t *testing.T) {
	clock := &budgetClock{now: start}
	eng, st := budgetEngine(t, clock)
	putBudget(t, st, store.Budget{UserID: store.BudgetEachPerson, Tokens: 60})
	const turns = 4
	m := newBudgetModel(turns)
	outs := make([]agent.Outcome, turns)
	errs := make([]error, turns)
	var wg sync.WaitGroup
	for i := range turns {
		wg.Go(func() {
			outs[i], errs[i] = eng.Respond(t.Context(), budgetRequest("ana", fmt.Sprint("conv_", i), m), nil, func(agent.Event) {})
		})
	}
	for range turns {
		<-m.arrived
	}
	close(m.release)
	wg.Wait()
	for i := range turns {
		if errs[i] != nil || outs[i].Stop != agent.StopBudget || !strings.Contains(outs[i].Text, "budget is used up") {
			t.Errorf("turn %d = %+v, %v; want stopped by its budget", i, outs[i], errs[i])
		}
	}
	if got := m.calls.Load(); got != turns {
		t.Errorf("model calls = %d, want %d (one per concurrent turn, none after the budget ran out)", got, turns)
	}
	spent, err := st.MonthSpend(t.Context(), "acme", "ana", start)
	if err != nil || spent.Tokens() != 60*turns {
		t.Errorf("spend = %+v, %v; want %d tokens", spent, err, 60*turns)
	}

	_, err = eng.Respond(t.Context(), budgetRequest("ana", "conv_late", m), nil, func(agent.Event) {})
	var over *budget.ExceededError
	if !errors.As(err, &over) || over.Org || over.Money || over.Limit != 60 || over.Spent != 240 {
		t.Fatalf("a turn over budget: %v, want the person's token budget used up (240 of 60)", err)
	}
	if got := m.calls.Load(); got != turns {
		t.Errorf("a turn over budget reached the model: %d calls", got)
	}
	if _, err := st.GetConversation(t.Context(), "acme", "conv_late"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused turn's conversation: %v, want none written", err)
	}
	// Another person, with the same default and nothing spent, goes on.
	out, err := eng.Respond(t.Context(), budgetRequest("bo", "conv_bo", m), nil, func(agent.Event) {})
	if err != nil || out.Stop != agent.StopBudget || m.calls.Load() != turns+1 {
		t.Errorf("bo's turn = %+v, %v after %d calls; want one call (0 then 60 of 60 tokens) and a stop", out, err, m.calls.Load())
	}
}

// TestBudgetResetsAtTheMonth: spend of the last instant of November
// counts against November; at midnight UTC on 1 December the budget is
// whole again.
func TestBudgetResetsAtTheMonth(t *testing.T) {
	clock := &budgetClock{now: time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)}
	eng, st := budgetEngine(t, clock)
	putBudget(t, st, store.Budget{UserID: "ana", CostMicros: 100})
	if err := st.PutUsage(t.Context(), store.Usage{OrgID: "acme", UserID: "ana", TurnID: "turn_old", Step: 1,
		Model: "fake:scripted", InputTokens: 100, CostMicros: 100, CreatedAt: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	m := newBudgetModel(0)
	var over *budget.ExceededError
	if _, err := eng.Respond(t.Context(), budgetRequest("ana", "conv_nov", m), nil, func(agent.Event) {}); !errors.As(err, &over) || !over.Money {
		t.Fatalf("November, 100 of 100 µ spent: %v, want the money budget used up", err)
	}
	if !strings.Contains(over.Error(), "$0.0001 of $0.0001") || !strings.Contains(over.Error(), "1 December 2026") {
		t.Errorf("message %q: want the amounts and the reset day", over.Error())
	}
	clock.Set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	out, err := eng.Respond(t.Context(), budgetRequest("ana", "conv_dec", m), nil, func(agent.Event) {})
	if err != nil || out.Stop != agent.StopBudget || m.calls.Load() != 2 {
		t.Errorf("December: %+v, %v after %d calls; want the turn to run (60 then 120 of 100 µ) and stop", out, err, m.calls.Load())
	}
}

// TestBudgetOfTheOrganisation: another person's spend uses up the
// organisation's budget for everyone; a dry run (the inspector) is not
// refused and shows the limits.
func TestBudgetOfTheOrganisation(t *testing.T) {
	clock := &budgetClock{now: start}
	eng, st := budgetEngine(t, clock)
	putBudget(t, st, store.Budget{UserID: store.BudgetOrganisation, Tokens: 50})
	if err := st.PutUsage(t.Context(), store.Usage{OrgID: "acme", UserID: "bo", TurnID: "turn_bo", Step: 1,
		Model: "fake:scripted", InputTokens: 30, OutputTokens: 20, CreatedAt: start}); err != nil {
		t.Fatal(err)
	}
	m := newBudgetModel(0)
	_, err := eng.Respond(t.Context(), budgetRequest("ana", "conv_a", m), nil, func(agent.Event) {})
	var over *budget.ExceededError
	if !errors.As(err, &over) || !over.Org || !strings.Contains(err.Error(), "your organisation's spend is 50 tokens of 50 tokens") {
		t.Fatalf("ana under a used-up organisation budget: %v", err)
	}
	dry := request("ana", "conv_a", true)
	c, err := eng.Collect(t.Context(), dry)
	if err != nil || c.Facts().Budget.Org.Tokens != 50 {
		t.Errorf("a dry run: %v, budget %+v; want it collected with the organisation's 50 tokens", err, c.Facts().Budget)
	}
	if m.calls.Load() != 0 {
		t.Errorf("model calls = %d, want none", m.calls.Load())
	}
}

// TestBudgetCountsACallCutOff: a call that fails after it produced
// output is billed by the provider, so it counts: the turn is recorded
// with an estimate of its usage, and the next turn is refused.
func TestBudgetCountsACallCutOff(t *testing.T) {
	clock := &budgetClock{now: start}
	eng, st := budgetEngine(t, clock)
	putBudget(t, st, store.Budget{UserID: "ana", Tokens: 1})
	m := llmtest.NewModel(llmtest.Reply{Text: []string{"Half an ans", "wer"}, Truncate: true})
	if _, err := eng.Respond(t.Context(), budgetRequest("ana", "conv_cut", m), nil, func(agent.Event) {}); err != nil {
		t.Logf("cut-off turn: %v", err)
	}
	spent, err := st.MonthSpend(t.Context(), "acme", "ana", start)
	if err != nil || spent.Calls != 1 || spent.InputTokens == 0 || spent.OutputTokens == 0 {
		t.Fatalf("spend after a call cut off = %+v, %v; want one call with estimated input and output", spent, err)
	}
	_, err = eng.Respond(t.Context(), budgetRequest("ana", "conv_next", m), nil, func(agent.Event) {})
	var over *budget.ExceededError
	if !errors.As(err, &over) {
		t.Errorf("the next turn: %v, want the budget used up", err)
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1", n)
	}
}
