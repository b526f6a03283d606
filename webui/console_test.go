package webui_test

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// consoleArgs decodes the console's arguments box.
func (b *browser) consoleArgs() map[string]any {
	b.t.Helper()
	raw := eval[string](b, `document.getElementById('console-args').value`)
	var v map[string]any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		b.t.Fatalf("console arguments %q: %v", raw, err)
	}
	return v
}

// pickTool chooses a tool in the console as a user would.
func (b *browser) pickTool(name string) {
	b.t.Helper()
	b.Do("pick "+name, chromedp.SetValue(chromedp.CSS(`#console-tool`), name)) // input and change events, as a user's pick
}

func TestToolConsoleRunsATool(t *testing.T) {
	api := newStubAPI()
	api.noModel.Store(true) // the console needs no model
	api.agents["helper"] = "name: helper\nprompt: Hi\n"
	b := newBrowser(t, api)
	b.login()
	b.open("#/tools?agent=assistant", `#console-tool:enabled`)
	if got := eval[string](b, `document.activeElement.id`); got != "console-h" {
		t.Errorf("focus on %q, want the console's heading", got)
	}
	options := eval[[]string](b, `[...document.querySelectorAll('#console-tool option')].map(o => o.value)`)
	if d := cmp.Diff([]string{"calculate", "convert_currency", "fetch_url", "write_file"}, options); d != "" {
		t.Errorf("console tools (-want +got):\n%s", d)
	}
	if got := eval[string](b, `document.getElementById('console-args').value`); got != "{\n  \"expression\": \"\"\n}" {
		t.Errorf("calculate's skeleton %q", got)
	}

	// A skeleton of every required property, by type.
	b.pickTool("convert_currency")
	want := map[string]any{"amount": float64(1), "currency": "EUR", "options": map[string]any{"round": false}, "tags": []any{}, "count": float64(0)}
	if d := cmp.Diff(want, b.consoleArgs()); d != "" {
		t.Errorf("convert_currency's skeleton (-want +got):\n%s", d)
	}
	b.WaitText(`#console-about`, "Optional parameters: date")
	b.pickTool("write_file")
	b.WaitText(`#console-about`, "This tool changes things")

	// Run: the result, its duration.
	b.pickTool("calculate")
	b.Do("run calculate", chromedp.SetValue(chromedp.CSS(`#console-args`), `{"expression": "2+2"}`),
		chromedp.Click(chromedp.CSS(`#console-run`)))
	b.WaitText(`#console-status`, "done")
	b.WaitText(`#console-result`, "\"value\": 4")
	b.WaitText(`#console-duration`, "calculate took 12 ms")
	if eval[bool](b, `document.getElementById('console-result').classList.contains('error')`) {
		t.Error("a successful result is styled as an error")
	}
	if d := cmp.Diff(map[string]any{"agent": "assistant", "tool": "calculate", "arguments": map[string]any{"expression": "2+2"}},
		b.sent("POST", "/api/console/run").Body); d != "" {
		t.Errorf("run body (-want +got):\n%s", d)
	}
	b.Shot("result")

	// A tool's failure is an error result.
	b.pickTool("fetch_url")
	b.Do("run fetch_url", chromedp.SetValue(chromedp.CSS(`#console-args`), `{"url": "http://10.0.0.1/"}`),
		chromedp.Click(chromedp.CSS(`#console-run`)))
	b.WaitText(`#console-status`, "error")
	b.WaitText(`#console-result`, "fetch_url: blocked: address not allowed (10.0.0.1)")
	if !eval[bool](b, `document.getElementById('console-result').classList.contains('error')`) {
		t.Error("an error result is not styled as one")
	}
	if got := eval[string](b, `location.hash`); got != "#/tools?agent=assistant&tool=fetch_url" {
		t.Errorf("hash %q, want the agent and tool", got)
	}
	b.Shot("error")

	// Arguments that are not a JSON object are not sent.
	b.Do("run with bad JSON", chromedp.SetValue(chromedp.CSS(`#console-args`), `["http://x/"]`), chromedp.Click(chromedp.CSS(`#console-run`)))
	b.WaitText(`#console-out .alert`, "Not run: the arguments must be a JSON object")
	if got := eval[string](b, `document.activeElement.id + ' ' + document.activeElement.getAttribute('aria-invalid')`); got != "console-args true" {
		t.Errorf("after bad arguments: %q, want the arguments focused and invalid", got)
	}
	if n := len(b.requests("POST", "/api/console/run")); n != 2 {
		t.Errorf("%d runs sent, want 2 (not the bad one)", n)
	}

	// Another agent, without tools.
	b.Do("pick helper", chromedp.SetValue(chromedp.CSS(`#console-agent`), "helper"))
	b.WaitText(`#console-about`, "This agent has no tools to run.")
	if !eval[bool](b, `document.getElementById('console-run').disabled`) {
		t.Error("Run is enabled without a tool")
	}
	if rs := b.requests("GET", "/api/console/tools"); len(rs) != 2 || rs[1].Query != "agent=helper" {
		t.Errorf("console tool requests %+v, want a second one for helper", rs)
	}
	b.checkHeaders(stubCSRF)
}

func TestNoModelNoticeBeforeSending(t *testing.T) {
	api := newStubAPI()
	api.noModel.Store(true)
	b := newBrowser(t, api)
	b.login()
	b.open("#/chat/"+stubConv, `#model-notice`)
	b.WaitText(`#model-notice .help-text`, stubModelHelp)
	b.WaitText(`#model-notice`, "The agent's model, openai:gpt-4.1-mini, cannot be reached")
	links := eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('#model-notice a')].map(a => [a.textContent, a.getAttribute('href')]))`)
	if d := cmp.Diff(map[string]string{
		"inspector": "#/inspect/" + stubConv, "tool console": "#/tools?agent=assistant", "Settings": "#/settings",
	}, links); d != "" {
		t.Errorf("notice links (-want +got):\n%s", d)
	}
	if got := eval[string](b, `document.getElementById('message').getAttribute('aria-describedby')`); got != "model-notice-text" {
		t.Errorf("message box described by %q, want the notice", got)
	}
	if n := len(b.requests("POST", convPath+"/messages")); n != 0 {
		t.Fatalf("%d messages sent before the notice check", n)
	}
	// Asked twice: by the new chat the app opens on, then by the conversation.
	if n := len(b.requests("GET", "/api/agents/assistant/model-status")); n != 2 {
		t.Errorf("model-status asked %d times, want twice", n)
	}
	b.Shot("notice")

	// The tool console link opens the console on the agent.
	b.Do("open the console", chromedp.Click(chromedp.CSS(`#model-notice a[href^="#/tools"]`)),
		chromedp.WaitEnabled(chromedp.CSS(`#console-tool`)))
	if got := eval[string](b, `document.getElementById('console-agent').value + ' ' + document.activeElement.id`); got != "assistant console-h" {
		t.Errorf("console opened on %q, want assistant with focus on the console", got)
	}
}

func TestNoNoticeWhenModelConnected(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/chat/"+stubConv, `#message`)
	rs := b.requests("GET", "/api/agents/assistant/model-status")
	if len(rs) != 2 || rs[1].Status != 200 {
		t.Fatalf("model-status requests %+v, want two (the new chat, the conversation) answered 200", rs)
	}
	if eval[bool](b, `!!document.getElementById('model-notice')`) {
		t.Error("the no-model notice is shown with a connected model")
	}
}
