package webui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// The stub's models: an agent offers its own model (the definition's
// model: line) and, when a test gives it some, others, answered as
// httpapi's GET …/models; PATCH of a conversation's model takes only an
// offered, connected one; each turn records the model it runs on.

// stubModel is a model an agent offers beyond its own.
type stubModel struct {
	Ref, Help string
	Connected bool
}

// offer makes agent offer models beyond its own.
func (s *stubAPI) offer(agent string, models ...stubModel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.models == nil {
		s.models = map[string][]stubModel{}
	}
	s.models[agent] = models
}

// ownModel is the model agent's definition names. Called with s.mu held.
func (s *stubAPI) ownModel(agent string) string {
	for _, line := range strings.Split(s.agents[agent], "\n") {
		if m, ok := strings.CutPrefix(line, "model: "); ok {
			return m
		}
	}
	return ""
}

// offers tells whether a conversation with agent may choose ref ("" is
// the agent's own). Called with s.mu held.
func (s *stubAPI) offers(agent, ref string) bool {
	if ref == "" || ref == s.ownModel(agent) {
		return true
	}
	for _, m := range s.models[agent] {
		if m.Ref == ref {
			return m.Connected
		}
	}
	return false
}

// choices answers GET …/models for agent, chosen being the
// conversation's choice.
func (s *stubAPI) choices(w http.ResponseWriter, agent, chosen string) {
	own := s.ownModel(agent)
	list := []map[string]any{{"model": own, "default": true, "connected": true}}
	for _, m := range s.models[agent] {
		list = append(list, map[string]any{"model": m.Ref, "default": false, "connected": m.Connected, "help": m.Help})
	}
	if chosen == "" {
		chosen = own
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": list, "model": chosen})
}

func (s *stubAPI) agentModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.agents[r.PathValue("name")]; !ok {
		writeErr(w, http.StatusNotFound, "not_found", "no such agent")
		return
	}
	s.choices(w, r.PathValue("name"), "")
}

func (s *stubAPI) conversationModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.conversationOf(w, r); c != nil {
		s.choices(w, c.Agent, c.Model)
	}
}

// run records the model a turn of conversation id runs on (its choice,
// else its agent's own); false for no conversation.
func (s *stubAPI) run(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return false
	}
	m := c.Model
	if m == "" {
		m = s.ownModel(c.Agent)
	}
	s.ranOn = append(s.ranOn, m)
	return true
}

// lastRanOn is the model the latest turn ran on.
func (s *stubAPI) lastRanOn() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ranOn) == 0 {
		return ""
	}
	return s.ranOn[len(s.ranOn)-1]
}

// pickerOption is one option of the model picker as shown.
type pickerOption struct {
	Value, Text      string
	Disabled, Chosen bool
}

func (b *browser) pickerOptions() []pickerOption {
	b.t.Helper()
	return eval[[]pickerOption](b, `[...document.querySelectorAll('#model-pick option')].map(o =>
		({ Value: o.value, Text: o.textContent, Disabled: o.disabled, Chosen: o.selected }))`)
}

// TestModelPicker: a conversation runs on the model picked among those
// its agent offers — the agent's own by default, a model the
// organisation does not connect shown but not choosable; the choice is
// saved with the conversation (PATCH), kept across a reload, and the
// next turn runs on it; going back to the agent's own saves "". A new
// chat's pick goes with its creation, before its first message. An agent
// offering one model shows no picker. At desktop and phone width.
func TestModelPicker(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.open("#/chat/"+stubConv, `#message`)
		if n := eval[int](b, `document.querySelectorAll('#model-pick').length`); n != 0 {
			t.Fatalf("an agent with one model shows %d pickers", n)
		}
		api.offer("assistant", stubModel{Ref: "openai:gpt-4.1", Connected: true},
			stubModel{Ref: "anthropic:claude-sonnet-4-5", Help: "set the Anthropic API key in Settings"})
		b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#model-pick`)))
		want := []pickerOption{
			{Value: "openai:gpt-4.1-mini", Text: "openai:gpt-4.1-mini (the agent's own)", Chosen: true},
			{Value: "openai:gpt-4.1", Text: "openai:gpt-4.1"},
			{Value: "anthropic:claude-sonnet-4-5", Text: "anthropic:claude-sonnet-4-5 (not connected)", Disabled: true},
		}
		if d := cmp.Diff(want, b.pickerOptions()); d != "" {
			t.Errorf("the picker (-want +got):\n%s", d)
		}
		if got := eval[string](b, `document.querySelector('#model-pick option[disabled]').title`); got != "set the Anthropic API key in Settings" {
			t.Errorf("the not-connected model's help %q", got)
		}
		b.Do("pick gpt-4.1", chromedp.SetValue(chromedp.CSS(`#model-pick`), "openai:gpt-4.1"))
		b.until("the choice saved", `!document.getElementById('model-pick').disabled`)
		if got := b.sent("PATCH", "/api/conversations/"+stubConv).Body; !cmp.Equal(got, map[string]any{"model": "openai:gpt-4.1"}) {
			t.Errorf("PATCH body %v", got)
		}
		b.send("Which model?")
		b.WaitText(`.transcript .msg.assistant:last-child .text`, "You said: Which model?")
		if got := api.lastRanOn(); got != "openai:gpt-4.1" {
			t.Errorf("the turn ran on %q, want the model picked", got)
		}
		b.fits(w, "the chat with the model picker")
		b.ShotView("picked")

		b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#model-pick`)))
		if got := eval[string](b, `document.getElementById('model-pick').value`); got != "openai:gpt-4.1" {
			t.Errorf("after a reload the picker shows %q, want the conversation's choice", got)
		}
		b.Do("back to the agent's own", chromedp.SetValue(chromedp.CSS(`#model-pick`), "openai:gpt-4.1-mini"))
		b.until("the choice saved", `!document.getElementById('model-pick').disabled`)
		if ps := b.requests("PATCH", "/api/conversations/"+stubConv); len(ps) != 2 || !cmp.Equal(ps[1].Body, map[string]any{"model": ""}) {
			t.Errorf("PATCH requests %+v, want the second to send model \"\"", ps)
		}

		// A new chat: the pick is saved with the conversation before its
		// first message is sent.
		b.open("#/chat", `.new-conv #model-pick`)
		if got := eval[string](b, `document.getElementById('model-pick').value`); got != "openai:gpt-4.1-mini" {
			t.Errorf("a new chat starts on %q, want the agent's own", got)
		}
		b.Do("pick gpt-4.1", chromedp.SetValue(chromedp.CSS(`#model-pick`), "openai:gpt-4.1"))
		b.fits(w, "a new chat with the model picker")
		b.ShotView("new-chat")
		b.send("Start on the big one")
		b.WaitText(`.transcript .msg.assistant:last-child .text`, "You said: Start on the big one")
		var order []string
		for _, r := range b.rec.recorded() {
			if r.Method != "GET" && strings.HasPrefix(r.Path, "/api/conversations") {
				order = append(order, r.Method+" "+r.Path)
			}
		}
		wantOrder := []string{"PATCH /api/conversations/conv_1", "POST /api/conversations/conv_1/messages",
			"PATCH /api/conversations/conv_1", "POST /api/conversations",
			"PATCH /api/conversations/conv_2", "POST /api/conversations/conv_2/messages"}
		if d := cmp.Diff(wantOrder, order); d != "" {
			t.Errorf("requests (-want +got):\n%s", d)
		}
		if got := b.sent("PATCH", "/api/conversations/conv_2").Body; !cmp.Equal(got, map[string]any{"model": "openai:gpt-4.1"}) {
			t.Errorf("the new chat's PATCH body %v", got)
		}
		if got := api.lastRanOn(); got != "openai:gpt-4.1" {
			t.Errorf("the new chat's first turn ran on %q, want the model picked", got)
		}
		b.Do("choose Vietnamese", chromedp.SetValue(chromedp.CSS(`#lang`), "vi"))
		b.WaitText(`label[for="model-pick"]`, "Mô hình")
	})
}
