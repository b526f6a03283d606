package replicatest_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/internal/replicatest"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestTwoReplicasShareConversations runs two quiver serve processes on
// one PostgreSQL database: a conversation created on either is listed by
// both and continued on the other, whose model request carries the
// first replica's turn, and both show one transcript.
func TestTwoReplicasShareConversations(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t)})
	a, b := c.Start(), c.Start()
	for _, r := range []*replicatest.Replica{a, b} {
		if !strings.HasPrefix(r.Store, "postgres postgres://postgres:xxxxx@") {
			t.Errorf("%s names its store %q, want postgres with the password hidden", r.Name, r.Store)
		}
	}
	onA := c.Admin(a).NewToken("replicatest")
	onB := onA.At(b)
	convA, convB := onA.NewConversation("assistant"), onB.NewConversation("assistant")
	if got := onA.Send(convA, "hello from a").Text; got != "echo: hello from a" {
		t.Errorf("turn on a: %q", got)
	}
	if got := onB.Send(convB, "hello from b").Text; got != "echo: hello from b" {
		t.Errorf("turn on b: %q", got)
	}
	for _, cl := range []*replicatest.Client{onA, onB} {
		if got := conversationIDs(t, cl); !slices.Contains(got, convA) || !slices.Contains(got, convB) {
			t.Errorf("%s lists %v, want %s and %s", cl.Base, got, convA, convB)
		}
	}
	// Each conversation goes on where the other replica left it.
	turn := onB.Send(convA, replicatest.CalcPrefix+"6 * 7")
	if turn.Text != "the result is 42." || !slices.Contains(turn.Kinds(), "tool_result") {
		t.Errorf("a's conversation continued on b: %q, events %v", turn.Text, turn.Kinds())
	}
	if got := onA.Send(convB, "again on a").Text; got != "echo: again on a" {
		t.Errorf("b's conversation continued on a: %q", got)
	}
	req := lastRequestFor(t, c.Model, "again on a")
	if !requestHas(req, "hello from b") || !requestHas(req, "echo: hello from b") {
		t.Errorf("a's model request lacks b's turn of the conversation: %+v", req.Messages)
	}
	for _, conv := range []string{convA, convB} {
		onBoth := onA.Messages(conv)
		if diff := cmp.Diff(onBoth, onB.Messages(conv)); diff != "" {
			t.Errorf("conversation %s differs between replicas (-a +b):\n%s", conv, diff)
		}
		if turns := turnIDs(onBoth); len(turns) != 2 {
			t.Errorf("conversation %s holds turns %v, want 2", conv, turns)
		}
	}
}

// TestSettingsAndPeopleReachOtherReplica: an organisation's settings
// saved through one replica are in force on the other from its next
// request (read by version, no restart): a switch reaches the prompt, a
// model key sealed on one is opened on the other, and a save based on the
// old version conflicts there. A user made on one signs in on the other
// with the link the first issued; a role change and disabling them there
// take effect on the other at once.
func TestSettingsAndPeopleReachOtherReplica(t *testing.T) {
	t.Parallel()
	const orgKey = "sk-org-key-replicas-41b7"
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t)})
	a, b := c.Start(), c.Start()
	onA := c.Admin(a)
	onB := onA.At(b)
	def := "name: shy\nmodel: openai:gpt-test\nprompt: |\n  {{if capability:emoji_usage}}EMOJI-ON{{else}}EMOJI-OFF{{/if}}\ntools: [calculate]\n"
	onA.JSON(http.MethodPut, "/api/agents/shy", map[string]string{"definition": def}, http.StatusCreated, nil)
	conv := onB.NewConversation("shy")
	if got := inspect(t, onB, conv, "hi"); !strings.Contains(got.System, "EMOJI-OFF") {
		t.Fatalf("b's prompt before the switch: %q", got.System)
	}
	var st settingsView
	onB.JSON(http.MethodGet, "/api/settings", nil, http.StatusOK, &st)
	if st.Version != 0 {
		t.Fatalf("settings version on b before any save: %d", st.Version)
	}
	update := map[string]any{"version": 0, "network_mode": "self-hosted", "switches": map[string]bool{"emoji_usage": true},
		"set_keys": map[string]string{"openai_api_key": orgKey}}
	onA.JSON(http.MethodPut, "/api/settings", update, http.StatusOK, &st)
	if st.Version != 1 {
		t.Fatalf("saved on a: version %d", st.Version)
	}

	onB.JSON(http.MethodGet, "/api/settings", nil, http.StatusOK, &st)
	if st.Version != 1 || !st.Switches["emoji_usage"] || st.keySource("openai_api_key") != "settings" {
		t.Errorf("b's settings after a's save: %+v", st)
	}
	if got := inspect(t, onB, conv, "hi"); !strings.Contains(got.System, "EMOJI-ON") {
		t.Errorf("b's prompt after a's save: %q", got.System)
	}
	onB.Send(conv, "which key?")
	if seen := c.Model.Seen(); len(seen) == 0 || seen[len(seen)-1].Header.Get("Authorization") != "Bearer "+orgKey {
		t.Error("b's turn did not call the model with the key a sealed")
	}
	if code, body := onB.Do(http.MethodPut, "/api/settings", update); code != http.StatusConflict {
		t.Errorf("a save on b based on version 0: %d %s, want 409", code, body)
	}

	var made struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		LoginLink string `json:"login_link"`
	}
	onA.JSON(http.MethodPost, "/api/users", map[string]string{"display_name": "Bea Member"}, http.StatusCreated, &made)
	member := c.SignIn(b, made.LoginLink)
	memberToken := member.NewToken("bea")
	if code, _ := member.Do(http.MethodGet, "/api/users", nil); code != http.StatusForbidden {
		t.Errorf("a member lists users on b: %d, want 403", code)
	}
	onA.JSON(http.MethodPatch, "/api/users/"+made.User.ID, map[string]string{"role": "admin"}, http.StatusOK, nil)
	if code, body := member.Do(http.MethodGet, "/api/users", nil); code != http.StatusOK {
		t.Errorf("made admin on a, lists users on b: %d %s", code, body)
	}
	onA.JSON(http.MethodDelete, "/api/users/"+made.User.ID, nil, http.StatusNoContent, nil)
	for name, cl := range map[string]*replicatest.Client{"session": member, "token": memberToken} {
		if code, _ := cl.Do(http.MethodGet, "/api/me", nil); code != http.StatusUnauthorized {
			t.Errorf("disabled on a, the user's %s on b: %d, want 401", name, code)
		}
	}
}

// TestMCPAndTriggersReachOtherReplica: an MCP server registered through
// one replica (Quiver's own quiver mcp serve on loopback) is listed by
// the other and its tool runs in the other's turns; disabling it there
// takes it out at once. Deliberate Tool Mode turned on and a custom
// trigger added through one replica gate and open the other's next
// turn.
func TestMCPAndTriggersReachOtherReplica(t *testing.T) {
	t.Parallel()
	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t)})
	endpoint := c.StartMCPServer("name: tools\nmodel: openai:gpt-test\nprompt: Tools.\ntools: []\n")
	a, b := c.Start(), c.Start()
	onA := c.Admin(a)
	onB := onA.At(b)
	onA.JSON(http.MethodPut, "/api/agents/relay", map[string]string{"definition": "name: relay\nmodel: openai:gpt-test\nprompt: Relay.\ntools: [calc/calculate]\n"}, http.StatusCreated, nil)
	relay := onB.NewConversation("relay")
	if tools := inspect(t, onB, relay, "x").toolNames(); slices.Contains(tools, "calc__calculate") {
		t.Fatalf("b declares calc__calculate before any registration: %v", tools)
	}
	onA.JSON(http.MethodPost, "/api/mcp-servers", map[string]string{"name": "calc", "url": endpoint}, http.StatusCreated, nil)
	var servers struct {
		Servers []struct {
			Name  string   `json:"name"`
			Tools []string `json:"tools"`
		} `json:"servers"`
	}
	onB.JSON(http.MethodGet, "/api/mcp-servers", nil, http.StatusOK, &servers)
	if len(servers.Servers) != 1 || servers.Servers[0].Name != "calc" || !slices.Contains(servers.Servers[0].Tools, "calculate") {
		t.Fatalf("b lists %+v, want calc with calculate", servers.Servers)
	}
	c.Model.SetReply(func(req llm.Request) llmtest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == llm.User && strings.HasPrefix(last.Text, "mcp: ") {
			call := llmtest.Call("call_mcp", "calc__calculate", map[string]string{"expression": strings.TrimPrefix(last.Text, "mcp: ")})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{call}}
		}
		return replicatest.Echo(req)
	})
	turn := onB.Send(relay, "mcp: 2 + 3")
	if turn.Text != "the result is 5." {
		t.Errorf("b's turn through a's registration: %q, events %v", turn.Text, turn.Kinds())
	}
	onA.JSON(http.MethodPost, "/api/mcp-servers/calc/disable", nil, http.StatusNoContent, nil)
	if tools := inspect(t, onB, relay, "x").toolNames(); slices.Contains(tools, "calc__calculate") {
		t.Errorf("b declares calc__calculate after a disabled it: %v", tools)
	}

	// Deliberate Tool Mode: the workspace tools are in every turn until
	// the mode gates them; a custom trigger opens them again.
	conv := onB.NewConversation("assistant")
	const ask = "zorblat my notes please"
	if tools := inspect(t, onB, conv, ask).toolNames(); !slices.Contains(tools, "list_files") {
		t.Fatalf("b without the mode: %v, want list_files", tools)
	}
	onA.JSON(http.MethodPut, "/api/deliberate", map[string]any{"enabled": true, "history_turns": 0}, http.StatusOK, nil)
	if tools := inspect(t, onB, conv, ask).toolNames(); slices.Contains(tools, "list_files") {
		t.Errorf("b after a turned the mode on: %v, want no list_files", tools)
	}
	onA.JSON(http.MethodPost, "/api/deliberate/triggers", map[string]string{"target": "files", "phrase": "zorblat"}, http.StatusCreated, nil)
	ins := inspect(t, onB, conv, ask)
	if !slices.Contains(ins.toolNames(), "list_files") || !strings.Contains(ins.reason("list_files"), "zorblat") {
		t.Errorf("b after a added the trigger: tools %v, list_files declared because %q", ins.toolNames(), ins.reason("list_files"))
	}
}

// settingsView is the part of GET /api/settings these tests read.
type settingsView struct {
	Version  int64           `json:"version"`
	Switches map[string]bool `json:"switches"`
	Keys     []struct {
		Name   string `json:"name"`
		Source string `json:"source"`
		Set    bool   `json:"set"`
	} `json:"keys"`
}

// keySource is where the named key comes from, "" when it is not set.
func (v settingsView) keySource(name string) string {
	for _, k := range v.Keys {
		if k.Name == name && k.Set {
			return k.Source
		}
	}
	return ""
}

// inspection is the part of GET …/inspect these tests read.
type inspection struct {
	System string `json:"system"`
	Tools  []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Declared []struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
	} `json:"declared"`
}

func (in inspection) toolNames() []string {
	var names []string
	for _, d := range in.Tools {
		names = append(names, d.Name)
	}
	return names
}

// reason is why the named tool was declared, "" when it was not.
func (in inspection) reason(name string) string {
	for _, d := range in.Declared {
		if d.Name == name {
			return d.Reason
		}
	}
	return ""
}

// inspect is the turn a message would start in conv, as cl's replica
// would run it now.
func inspect(t *testing.T, cl *replicatest.Client, conv, message string) inspection {
	t.Helper()
	var in inspection
	code, body := cl.Do(http.MethodGet, "/api/conversations/"+conv+"/inspect?message="+strings.ReplaceAll(message, " ", "+"), nil)
	if code != http.StatusOK || json.Unmarshal(body, &in) != nil {
		t.Fatalf("inspect on %s: %d %s", cl.Base, code, body)
	}
	return in
}

// conversationIDs lists the caller's conversations on cl's replica.
func conversationIDs(t *testing.T, cl *replicatest.Client) []string {
	t.Helper()
	var out struct {
		Conversations []struct {
			ID string `json:"id"`
		} `json:"conversations"`
	}
	cl.JSON(http.MethodGet, "/api/conversations", nil, http.StatusOK, &out)
	var ids []string
	for _, c := range out.Conversations {
		ids = append(ids, c.ID)
	}
	return ids
}

// turnIDs are the distinct turns of a transcript, in order.
func turnIDs(msgs []replicatest.Message) []string {
	var ids []string
	for _, m := range msgs {
		if m.TurnID != "" && !slices.Contains(ids, m.TurnID) {
			ids = append(ids, m.TurnID)
		}
	}
	return ids
}

// lastRequestFor is the last model request whose last user message is
// text.
func lastRequestFor(t *testing.T, m *replicatest.Model, text string) llm.Request {
	t.Helper()
	seen := m.Seen()
	for i := len(seen) - 1; i >= 0; i-- {
		if replicatest.LastUserText(seen[i].Req) == text {
			return seen[i].Req
		}
	}
	t.Fatalf("no model request for %q", text)
	return llm.Request{}
}

// requestHas reports whether a message of req holds text.
func requestHas(req llm.Request, text string) bool {
	return slices.ContainsFunc(req.Messages, func(m llm.Message) bool { return strings.Contains(m.Text, text) })
}
