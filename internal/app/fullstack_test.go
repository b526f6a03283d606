package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/browsertest"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestFullStackInBrowser drives the embedded web pages in headless
// Chromium against a real "quiver serve" (in-process, on loopback), whose
// model is the scripted OpenAI-wire fake and whose MCP server is a real
// one from the official SDK: sign in with the first-start link, write an
// agent, chat through a tool call and a paused question, inspect the turn,
// and add and delete an MCP server. Screenshots go to
// $QUIVER_ARTIFACTS/fullstack.
func TestFullStackInBrowser(t *testing.T) {
	const (
		zone     = "Europe/Paris"
		question = "Which exchange rate should I use?"
		answer   = "Today's ECB rate"
		final    = "At today's ECB rate, 40.8 USD is 37.50 EUR."
	)
	model := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("call_calc", "calculate", map[string]string{"expression": "17% * 240"})}},
		llmtest.Reply{Text: []string{"It is ", "40.8."}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("call_ask", "ask_clarifying_question",
			map[string]any{"question": question, "suggested_answers": []string{answer}})}},
		llmtest.Reply{Text: []string{"At today's ECB rate, ", "40.8 USD is 37.50 EUR."}},
	)
	peer := startFullStackMCP(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "quiver.yaml")
	// Self-hosted: the MCP server is on loopback. Web search off: no
	// engine is reached, and the inspector has a reason to show.
	if err := os.WriteFile(cfg, []byte("network:\n  mode: self-hosted\nweb:\n  disabled: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := serveFullStack(t, filepath.Join(dir, "data"), cfg, model)
	b := browsertest.New(t, browsertest.Config{Origin: s.base, Timezone: zone, Artifacts: fullStackArtifacts(t)})

	// 1. The first-start login link opens the sign-in page; Sign in signs the admin in.
	b.Do("open the login link", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.CSS(`#sign-in`)))
	b.WaitText(`#account`, "Admin")
	// The button arms itself (its script ran under the page's policy).
	b.Do("sign in", chromedp.WaitVisible(chromedp.CSS(`#sign-in[data-armed]`)), chromedp.Click(chromedp.CSS(`#sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#nav`)))
	b.WaitText(`#who-name`, "Admin (admin)")
	if got := browsertest.Eval[string](b, `location.pathname`); got != "/" {
		t.Errorf("after the login link the page is at %q, want /", got)
	}
	b.Shot("1-signed-in")

	// 2. An agent, validated on save.
	fullStackAgent(t, b)
	b.Shot("2-agent")

	// 3. A conversation: a tool call, then a paused question answered
	// with its suggestion.
	conv := fullStackChat(t, b)
	b.Shot("3a-calculated")
	// Back to the agent's own model for the rest of the conversation:
	// saved at once (the picker is off until the PATCH answers).
	b.Do("pick the agent's own model", chromedp.SetValue(chromedp.CSS(`#model-pick`), "openai:fake-fullstack"),
		chromedp.WaitEnabled(chromedp.CSS(`#model-pick`)))
	b.Do("send the second message", chromedp.SetValue(chromedp.CSS(`#message`), "Convert that to euros."),
		chromedp.Click(chromedp.CSS(`#send`)), chromedp.WaitVisible(chromedp.CSS(`button.suggested`)))
	b.WaitText(`.transcript .msg.question .text`, question)
	b.WaitText(`button.suggested`, answer)
	b.WaitText(`.composer label`, "Your answer")
	b.Shot("3b-question")
	b.Do("pick the suggested answer", chromedp.Click(chromedp.CSS(`button.suggested`)),
		chromedp.WaitNotPresent(chromedp.CSS(`.pause`)))
	b.WaitText(`.transcript .msg.assistant:last-child .text`, final)
	b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)), chromedp.WaitEnabled(chromedp.CSS(`#send`)))
	b.Shot("3c-answered")
	checkModelSaw(t, model, zone, answer)

	// 4. The inspector: what a turn declares and what it leaves out.
	fullStackInspector(t, b, conv)

	// 5. An MCP server: added against the real one, then deleted.
	fullStackMCP(t, b, peer)
}

// fullStackAgent writes the agent in the Agents page: an invalid
// allowlist entry is refused, the fixed definition saved.
func fullStackAgent(t *testing.T, b *browsertest.Browser) {
	t.Helper()
	const def = `name: fullstack
model: openai:fake-fullstack
models: [openai:fake-fullstack-big]
prompt: |
  You are the full-stack test's agent. Compute with {calculator_tool};
  ask with {clarifying_question_tool} when a choice is the user's.
tools: [calculate, ask_clarifying_question, web_search]
`
	save := chromedp.Click(chromedp.CSS(`.agent-form button[type=submit]`))
	b.Do("open a new agent", route("#/agents/new"), chromedp.WaitVisible(chromedp.CSS(`#definition`)))
	b.Do("save an invalid agent", chromedp.SetValue(chromedp.CSS(`#definition`), strings.Replace(def, "web_search]", `"Web Search"]`, 1)), save)
	b.WaitText(`.form-status .alert`, `tools[2] "Web Search": not a tool or family name`)
	b.Do("save the agent", chromedp.SetValue(chromedp.CSS(`#definition`), def), save)
	b.WaitText(`.form-status`, "Saved “fullstack”.")
	if n := browsertest.Eval[int](b, `document.querySelectorAll('.form-status .warnings li').length`); n != 0 {
		t.Errorf("the agent saved with %d template warnings", n)
	}
	b.Do("list agents", route("#/agents"), chromedp.WaitVisible(chromedp.CSS(`.agent-list`)))
	names := browsertest.Eval[[]string](b, `[...document.querySelectorAll('.agent-list code')].map(c => c.textContent)`)
	if d := cmp.Diff([]string{"assistant", "fullstack"}, names); d != "" {
		t.Errorf("agents listed (-want +got):\n%s", d)
	}
}

// fullStackChat starts a new chat with the agent, whose first message (a
// turn with a calculate call) creates the conversation; it returns the
// conversation's id.
func fullStackChat(t *testing.T, b *browsertest.Browser) string {
	t.Helper()
	b.Do("new chat", route("#/chat"), chromedp.WaitVisible(chromedp.CSS(`.new-conv #message`)),
		chromedp.SetValue(chromedp.CSS(`#new-agent`), "fullstack"))
	b.WaitText(`#thread-h`, "New chat")
	// The agent offers a second model: picked here, the conversation runs
	// on it (checkModelSaw finds it in every model request).
	b.Do("pick the agent's other model", chromedp.WaitReady(chromedp.CSS(`#model-pick option[value="openai:fake-fullstack-big"]`)),
		chromedp.SetValue(chromedp.CSS(`#model-pick`), "openai:fake-fullstack-big"))
	if got := browsertest.Eval[string](b, `document.getElementById('model-pick').value`); got != "openai:fake-fullstack-big" {
		t.Fatalf("the picker shows %q after picking the agent's other model (not connected?)", got)
	}
	b.Do("send the first message", chromedp.SetValue(chromedp.CSS(`#message`), "What is 17% of 240?"),
		chromedp.Click(chromedp.CSS(`#send`)))
	b.WaitText(`.tool-card[data-call-id="call_calc"] .badge`, "done")
	b.WaitText(`.transcript .msg.assistant:last-child .text`, "It is 40.8.")
	b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))
	conv := strings.TrimPrefix(browsertest.Eval[string](b, `location.hash`), "#/chat/")
	if conv == "" || strings.Contains(conv, "/") {
		t.Fatalf("after the first message the page is at %q, want the new conversation", browsertest.Eval[string](b, `location.hash`))
	}
	type card struct{ Name, Args, Result, Badge string }
	cards := browsertest.Eval[[]card](b, `[...document.querySelectorAll('.tool-card')].map(c => ({
		Name: c.querySelector('.tool-name').textContent,
		Args: c.querySelector('pre.args').textContent,
		Result: c.querySelector('.tool-result pre').textContent,
		Badge: c.querySelector('.badge').textContent }))`)
	want := []card{{Name: "calculate", Args: "{\n  \"expression\": \"17% * 240\"\n}", Result: "40.8", Badge: "done"}}
	if d := cmp.Diff(want, cards); d != "" {
		t.Errorf("tool cards (-want +got):\n%s", d)
	}
	b.WaitText(`#usage`, "2 model calls")
	// The first message named the conversation, in the heading and the list.
	b.WaitText(`#thread-h`, "What is 17% of 240?")
	b.WaitText(`.conv-list a[aria-current=page] .conv-title`, "What is 17% of 240?")
	return conv
}

// checkModelSaw asserts what reached the fake model: four requests, the
// first message's two for the model picked in the new chat and the
// others for the agent's own, picked again before the second message;
// the browser's zone in the context message, the calculate result, and
// the answer to the question.
func checkModelSaw(t *testing.T, model *llmtest.Server, zone, answer string) {
	t.Helper()
	seen := model.Seen()
	if len(seen) != 4 {
		t.Fatalf("the model got %d requests, want 4", len(seen))
	}
	for i, s := range seen {
		want := "fake-fullstack-big"
		if i >= 2 {
			want = "fake-fullstack"
		}
		var req struct{ Model string }
		if err := json.Unmarshal(s.Raw, &req); err != nil || req.Model != want {
			t.Errorf("model request %d is for %q (%v), want the model picked, %s", i+1, req.Model, err, want)
		}
	}
	if msgs := seen[0].Req.Messages; len(msgs) == 0 || !strings.Contains(msgs[0].Text, zone) {
		t.Errorf("the context message does not carry the browser's zone %s: %+v", zone, msgs)
	}
	last := func(i int) llm.Message { m := seen[i].Req.Messages; return m[len(m)-1] }
	if d := cmp.Diff([]llm.ToolResult{{CallID: "call_calc", Name: "calculate", Content: "40.8"}}, last(1).Results); d != "" {
		t.Errorf("the tool result the model got (-want +got):\n%s", d)
	}
	if got := last(3); got.Role != llm.User || got.Text != answer {
		t.Errorf("the model's last message after the answer is %s %q, want the user's %q", got.Role, got.Text, answer)
	}
	var declared []string
	for _, d := range seen[0].Req.Tools {
		declared = append(declared, d.Name)
	}
	if !slices.Contains(declared, "calculate") || slices.Contains(declared, "web_search") {
		t.Errorf("declared tools %v: want calculate, not web_search", declared)
	}
}

// fullStackInspector opens the conversation's inspector from the chat: a
// new turn leaves web_search out because the configuration disables it;
// the past turn shows the toolset it ran with and the reasons recorded
// when it started, without today's appended.
func fullStackInspector(t *testing.T, b *browsertest.Browser, conv string) {
	t.Helper()
	b.Do("open the inspector", chromedp.Click(chromedp.CSS(`.thread-head a`)),
		chromedp.WaitVisible(chromedp.CSS(`table.excluded`)))
	if got := browsertest.Eval[string](b, `location.hash`); got != "#/inspect/"+conv {
		t.Errorf("inspector at %q", got)
	}
	excluded := func() map[string]string {
		return browsertest.Eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('table.excluded tbody tr')]
			.map(r => [r.cells[0].textContent, r.cells[1].textContent]))`)
	}
	declared := func() []string {
		return browsertest.Eval[[]string](b, `[...document.querySelectorAll('.tools-table tbody th code')].map(c => c.textContent)`)
	}
	ex := excluded()
	for name, want := range map[string]string{"web_search": "web search is disabled in config", "fetch_url": "not in the agent's allowlist"} {
		if ex[name] != want {
			t.Errorf("excluded %s: reason %q, want %q (all: %v)", name, ex[name], want, ex)
		}
	}
	if d := declared(); !slices.Contains(d, "calculate") || !slices.Contains(d, "ask_clarifying_question") || slices.Contains(d, "web_search") {
		t.Errorf("declared tools %v", d)
	}
	b.WaitText(`.inspection`, "openai:fake-fullstack")
	b.Shot("4a-inspector-draft")

	type option struct{ Value, Label string }
	opts := browsertest.Eval[[]option](b, `[...document.querySelectorAll('#turn option')].filter(o => o.value).map(o => ({Value: o.value, Label: o.textContent}))`)
	if len(opts) != 2 || !strings.Contains(opts[1].Label, "What is 17% of 240?") || !strings.Contains(opts[0].Label, "Convert that to euros.") {
		t.Fatalf("past turns offered: %+v", opts)
	}
	b.Do("inspect the first turn", chromedp.SetValue(chromedp.CSS(`#turn`), opts[1].Value),
		chromedp.Click(chromedp.CSS(`.inspect-form button[type=submit]`)))
	b.WaitText(`.inspection dl.facts`, opts[1].Value)
	ex = excluded()
	for name, want := range map[string]string{"web_search": "web search is disabled in config", "fetch_url": "not in the agent's allowlist"} {
		if ex[name] != want {
			t.Errorf("past turn: excluded %s: reason %q, want %q (all: %v)", name, ex[name], want, ex)
		}
	}
	if d := declared(); !slices.Contains(d, "calculate") || slices.Contains(d, "web_search") {
		t.Errorf("past turn: declared tools %v", d)
	}
	b.Shot("4b-inspector-turn")
}

// fullStackMCP adds the MCP server in its page, sees its discovered
// tools, and deletes it through the confirmation.
func fullStackMCP(t *testing.T, b *browsertest.Browser, peer *fullStackPeer) {
	t.Helper()
	b.Do("open MCP servers", route("#/mcp"), chromedp.WaitVisible(chromedp.CSS(`#mcp-add`)))
	b.WaitText(`.servers`, "No MCP servers are registered.")
	b.Do("add the server",
		chromedp.SetValue(chromedp.CSS(`#mcp-name`), "localtools"),
		chromedp.SetValue(chromedp.CSS(`#mcp-url`), peer.URL),
		chromedp.SetValue(chromedp.CSS(`#mcp-type`), "general"),
		chromedp.Click(chromedp.CSS(`#mcp-add button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-server="localtools"]`)))
	b.WaitText(`.form-status`, "Added “localtools”: 2 tools discovered.")
	type row struct {
		URL, Status, Token string
		Tools              []string
	}
	got := browsertest.Eval[row](b, `(() => { const r = document.querySelector('tr[data-server="localtools"]');
		const cell = (l) => r.querySelector('[data-label="' + l + '"]').textContent;
		return { URL: cell('URL'), Status: cell('Status'), Token: cell('Token'),
			Tools: [...r.querySelectorAll('[data-label="Tools"] li')].map(li => li.textContent) }; })()`)
	if d := cmp.Diff(row{URL: peer.URL, Status: "Enabled", Token: "Not set", Tools: []string{"localtools__echo", "localtools__lookup_order"}}, got); d != "" {
		t.Errorf("server row (-want +got):\n%s", d)
	}
	if peer.hits.Load() == 0 {
		t.Error("the MCP server was never contacted")
	}
	b.Shot("5a-mcp-added")
	b.Do("delete the server",
		chromedp.Click(chromedp.CSS(`tr[data-server="localtools"] button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog.confirm`)))
	b.WaitText(`dialog.confirm`, "Delete the MCP server “localtools”?")
	b.Shot("5b-mcp-confirm")
	b.Do("confirm", chromedp.Click(chromedp.CSS(`dialog.confirm button[value="yes"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-server="localtools"]`)))
	b.WaitText(`.form-status`, "Deleted “localtools”.")
	b.WaitText(`.servers`, "No MCP servers are registered.")
	b.Shot("5c-mcp-deleted")
}

// route moves the app to a hash route.
func route(hash string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, hash))
}

// fullStackArtifacts is where the screenshots go: $QUIVER_ARTIFACTS/fullstack,
// else "" (the browser's temporary directory).
func fullStackArtifacts(t *testing.T) string {
	if d := os.Getenv("QUIVER_ARTIFACTS"); d != "" {
		return filepath.Join(d, "fullstack")
	}
	return ""
}

// fullStackPeer is a real MCP server (the official SDK, Streamable HTTP)
// on loopback with two tools, counting the requests it gets.
type fullStackPeer struct {
	URL  string
	hits atomic.Int64
}

func startFullStackMCP(t *testing.T) *fullStackPeer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "localtools", Version: "1.0.0"}, nil)
	type textIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup_order", Description: "Looks an order up by its number."}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "order " + in.Text + ": shipped"}}}, nil, nil
	})
	p := &fullStackPeer{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p.URL = hs.URL + "/mcp"
	return p
}

// fullStackServing is a running "quiver serve" with its first-start
// login link.
type fullStackServing struct{ base, login string }

// serveFullStack runs "quiver serve --config cfg" as startServe does,
// logging to a buffer the test prints when it fails.
func serveFullStack(t *testing.T, data, cfg string, model *llmtest.Server) fullStackServing {
	t.Helper()
	logs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	env := app.Env{
		Stdout: io.Discard, Stderr: pw, Now: clock.Now,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Getenv: func(k string) string {
			switch k {
			case "QUIVER_DATA":
				return data
			case "OPENAI_API_KEY":
				return "test-key"
			case "OPENAI_BASE_URL":
				return model.URL
			}
			return ""
		},
	}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--config", cfg}, env)
		pw.Close()
	}()
	var s fullStackServing
	linkRe := regexp.MustCompile(`(http://\S+/login\?token=\S+)`)
	servingRe := regexp.MustCompile(`serving (http://\S+)`)
	sc := bufio.NewScanner(pr)
	for s.base == "" && sc.Scan() {
		fmt.Fprintln(logs, sc.Text())
		if m := linkRe.FindStringSubmatch(sc.Text()); m != nil {
			s.login = m[1]
		}
		if m := servingRe.FindStringSubmatch(sc.Text()); m != nil {
			s.base = m[1]
		}
	}
	if s.base == "" || s.login == "" {
		cancel()
		t.Fatalf("serve printed no address or login link (exit %d):\n%s", <-done, logs)
	}
	go io.Copy(logs, pr)
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
		if t.Failed() {
			t.Logf("serve's log:\n%s", logs)
		}
	})
	return s
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
