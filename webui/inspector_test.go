package webui_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
)

// inspectEngine serves the inspector (and the catalog it reads the
// ceilings from) from the real turn engine, everything else from the
// scripted one.
type inspectEngine struct {
	*scriptedEngine
	real httpapi.Engine
}

func (e inspectEngine) Inspect(ctx context.Context, c httpapi.Caller, conv, turnID, message string) (httpapi.Inspection, error) {
	return e.real.Inspect(ctx, c, conv, turnID, message)
}

func (e inspectEngine) InspectDraft(ctx context.Context, c httpapi.Caller, agentName, message string) (httpapi.Inspection, error) {
	return e.real.InspectDraft(ctx, c, agentName, message)
}

func (e inspectEngine) Catalog(ctx context.Context, c httpapi.Caller) (httpapi.Catalog, error) {
	return e.real.Catalog(ctx, c)
}

// analystAgent has optional tools and Deliberate Tool Mode on, so a
// draft asking for arithmetic leaves the web tools out with the mode's
// reason.
const analystAgent = "name: analyst\nmodel: openai:gpt-4.1-mini\nprompt: |\n  You analyse figures.\n" +
	"tools: [web_search, fetch_url]\ndeliberate_tool_mode: {enabled: true}\n"

// realInspector is realAPI with the agent analyst, a conversation of
// Ana's with one stored turn of two model calls (a calculator call, its
// result, the answer), and the inspector served by the real engine.
func realInspector(t *testing.T) (string, *browser) {
	t.Helper()
	ctx := context.Background()
	det, err := intent.LoadDetector("")
	if err != nil {
		t.Fatal(err)
	}
	_, _, b := realAPIWith(t, func(st store.Store, e *scriptedEngine) httpapi.Engine {
		now := clock.Now
		build := func(cfg config.Config, _ map[string]string) *registry.Catalog {
			return builtin.NewCatalog(builtin.CatalogDeps{Config: cfg})
		}
		rt := engine.StaticRuntime(engine.Runtime{Catalog: build(config.Config{}, nil), Network: "public"})
		parse := func(def []byte) (engine.Agent, error) {
			ag, err := config.ParseAgent(def)
			if err != nil {
				return engine.Agent{}, err
			}
			m, err := ag.TurnModel("")
			return engine.Agent{Agent: ag.TurnAgent(), Model: m}, err
		}
		disp := dispatch.New(dispatch.Config{Results: st, Now: now})
		eng := engine.New(engine.Config{
			Repos:   engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st},
			Runtime: rt, Agents: engine.StoredAgents(st, parse), Detector: det, Dispatcher: disp,
			Runner: agent.New(agent.Config{Store: st, Dispatcher: disp, Now: now}), Now: now,
		})
		sz := builtin.CatalogSizes()
		real := httpapi.NewEngine(httpapi.EngineConfig{Engine: eng, Runtimes: rt, Agents: engine.StoredAgents(st, parse),
			MCPServers: st, Turns: st, ParseAgent: parse, Settings: settings.New(settings.Config{Store: st, Build: build}),
			Sizes: httpapi.CatalogSizes{AlwaysPaidChars: sz.AlwaysPaid.Chars, AlwaysPaidCeiling: sz.AlwaysPaid.Ceiling,
				WidestChars: sz.Widest.Chars, WidestCeiling: sz.Widest.Ceiling}})
		at := clock.Now().UTC()
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(st.PutAgent(ctx, store.StoredAgent{OrgID: "org_a", Name: "analyst", Definition: []byte(analystAgent), CreatedAt: at, UpdatedAt: at}))
		must(st.PutConversation(ctx, store.Conversation{ID: "conv_calc", OrgID: "org_a", UserID: "ana", Agent: "analyst", Title: "Sums", CreatedAt: at, UpdatedAt: at}))
		for _, m := range []store.Message{
			{Role: "context", Content: "Caller: Ana Lima (Finance, Acme)"},
			{Role: "user", Content: "What is 17.5% of 2340?"},
			{Role: "assistant", Content: "Let me compute it."},
			{Role: "tool_call", ToolName: "calculate", ToolCallID: "call_1", Content: `{"expression":"2340*0.175"}`},
			{Role: "tool", ToolName: "calculate", ToolCallID: "call_1", Content: "409.5"},
			{Role: "assistant", Content: "17.5% of 2340 is 409.5."},
		} {
			m.ConversationID, m.TurnID, m.CreatedAt = "conv_calc", "turn_calc", at
			_, err := st.AppendMessage(ctx, "org_a", m)
			must(err)
		}
		must(st.PutTurn(ctx, store.Turn{ID: "turn_calc", OrgID: "org_a", UserID: "ana", ConversationID: "conv_calc", Agent: "analyst",
			Model: "openai:gpt-4.1-mini", Tools: []string{"calculate"}, Status: store.TurnDone, Steps: 2, StartedAt: at, EndedAt: at.Add(time.Second)}))
		return inspectEngine{scriptedEngine: e, real: real}
	})
	return "conv_calc", b
}

// callText reads the messages a model call shows, one line each: its
// role, then its text, tool calls and results.
func (b *browser) callText(n string) []string {
	b.t.Helper()
	return eval[[]string](b, `[...document.querySelectorAll('details.call[data-call="`+n+`"] .call-msg')].map(li =>
		[li.querySelector('.role').textContent, ...[...li.querySelectorAll('.msg-text, .msg-call, .msg-result')].map(e => e.textContent)].join(' | '))`)
}

// TestInspectAgentDraft: from the Agents page, an agent is inspected
// with a draft message and no conversation: the summary leads (declared
// tools with their sizes against the ceilings, the tools left out with
// their reasons, Deliberate Tool Mode's match), then the one model call
// as it would be sent; the draft has no turn id, and no conversation is
// made. At desktop and phone width.
func TestInspectAgentDraft(t *testing.T) {
	eachWidth(t, func(t *testing.T, vp width) {
		_, b := realInspector(t)
		b.use(vp)
		b.open("#/agents", `li[data-agent="analyst"] a.inspect-agent`)
		b.Do("inspect analyst", chromedp.Click(chromedp.CSS(`li[data-agent="analyst"] a.inspect-agent`)),
			chromedp.WaitVisible(chromedp.CSS(`#agent-inspect`)), chromedp.WaitVisible(chromedp.CSS(`#ins-summary`)))
		const draft = "what is 17.5% of 2340?"
		b.Do("type a draft", chromedp.SetValue(chromedp.CSS(`#draft`), draft), chromedp.Click(chromedp.CSS(`#agent-inspect button[type=submit]`)))
		b.WaitText(`details.call[data-call="1"]`, draft)
		want := "#/inspect?" + (url.Values{"agent": {"analyst"}, "message": {draft}}).Encode()
		if got := eval[string](b, `location.hash`); got != want {
			t.Errorf("address after inspecting %q: want it to name the agent and the draft", got)
		}
		// The summary comes first, and says what the draft is.
		order := eval[[]string](b, `[...document.querySelectorAll('.inspection > section h2')].map(e => e.id)`)
		if len(order) < 2 || order[0] != "ins-summary" || order[1] != "ins-calls" {
			t.Errorf("sections %q: want the summary, then the model calls, first", order)
		}
		b.WaitText(`#ins-turn`, "A draft: not run, so it has no turn id yet")
		if strings.Contains(eval[string](b, `document.querySelector('.inspection').textContent`), "turn_") {
			t.Error("the draft shows a turn id")
		}
		b.WaitText(`#sum-declared`, "calculate")
		b.WaitText(`#sum-declared`, "characters")
		b.WaitText(`section[aria-labelledby="ins-summary"] .gauges`, "of 13,456 characters") // always-on against its ceiling
		left := eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('#sum-excluded li')].map(li =>
			[li.querySelector('code').textContent, li.textContent.slice(li.querySelector('code').textContent.length + 2)]))`)
		if !strings.HasPrefix(left["web_search"], "deliberate tool mode: ") || !strings.HasPrefix(left["fetch_url"], "deliberate tool mode: ") {
			t.Errorf("left out %v: want the web tools, with the mode's reason", left)
		}
		b.WaitText(`#sum-intent`, "calc")
		if got := b.callText("1"); len(got) != 2 || !strings.HasPrefix(got[0], "Context message | ") || got[1] != "User | "+draft {
			t.Errorf("the call's messages %q: want the context message, then the draft", got)
		}
		b.Do("definitions", chromedp.Click(chromedp.CSS(`details.call[data-call="1"] .call-defs summary`)))
		b.WaitText(`details.call[data-call="1"] .call-defs pre`, `"name": "calculate"`)
		r := b.requests("GET", "/api/agents/analyst/inspect")
		if len(r) != 2 || r[1].Query != "message="+url.QueryEscape(draft) {
			t.Errorf("inspect requests %+v", r)
		}
		if n := len(b.requests("POST", "/api/conversations")); n != 0 {
			t.Errorf("a draft made %d conversations", n)
		}
		b.fits(vp, "the agent's draft")
		b.shotOf(`.inspection`, "agent-draft")
		// In Vietnamese, from the catalog.
		b.Do("choose Vietnamese", chromedp.SetValue(chromedp.CSS(`#lang`), "vi"))
		b.WaitText(`#ins-turn`, "Bản nháp: chưa chạy, nên chưa có mã lượt")
		b.WaitText(`#ins-summary`, "Tóm tắt")
		b.WaitText(`details.call[data-call="1"] .call-title`, "Lần gọi 1")
	})
}

// TestInspectStoredTurnCalls: a past turn shows each of its model calls
// as it was sent — the second with the first's tool call and its result —
// and its turn id and number of calls. At desktop and phone width.
func TestInspectStoredTurnCalls(t *testing.T) {
	eachWidth(t, func(t *testing.T, vp width) {
		conv, b := realInspector(t)
		b.use(vp)
		b.open("#/inspect/"+conv+"?turn=turn_calc", `details.call[data-call="2"]`)
		b.WaitText(`#ins-turn`, "turn_calc · 2 model calls")
		b.WaitText(`#ins-calls`, "Model calls (2)")
		b.Do("open call 2", chromedp.Click(chromedp.CSS(`details.call[data-call="2"] summary`)))
		b.WaitText(`details.call[data-call="2"]`, "409.5")
		want := [][]string{
			{"Context message | Caller: Ana Lima (Finance, Acme)", "User | What is 17.5% of 2340?"},
			{"Context message | Caller: Ana Lima (Finance, Acme)", "User | What is 17.5% of 2340?",
				"Assistant | Let me compute it. | Calls calculate (call_1){\n  \"expression\": \"2340*0.175\"\n}",
				"Tool results | Result of calculate (call_1)409.5"},
		}
		if d := cmp.Diff(want, [][]string{b.callText("1"), b.callText("2")}); d != "" {
			t.Errorf("calls (-want +got):\n%s", d)
		}
		if got := b.sent("GET", "/api/conversations/"+conv+"/inspect").Query; got != "turn=turn_calc" {
			t.Errorf("inspect query %q", got)
		}
		b.fits(vp, "a stored turn")
		b.shotOf(`section[aria-labelledby="ins-calls"]`, "stored-calls")
	})
}
