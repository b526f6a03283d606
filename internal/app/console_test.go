package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm/llmtest"
)

// toolRun is POST /api/console/run's answer.
type toolRun struct {
	Tool    string `json:"tool"`
	Result  string `json:"result"`
	IsError bool   `json:"is_error"`
}

// run runs one tool from the console.
func (a *apiClient) run(agent, tool string, args any) toolRun {
	a.t.Helper()
	code, body := a.do(http.MethodPost, "/api/console/run", map[string]any{"agent": agent, "tool": tool, "arguments": args})
	var out toolRun
	if code != http.StatusOK || json.Unmarshal(body, &out) != nil {
		a.t.Fatalf("console run %s: %d %s", tool, code, body)
	}
	return out
}

// invite creates a member through the API and signs them in.
func (a *apiClient) invite(s serving, name string) *apiClient {
	a.t.Helper()
	code, body := a.do(http.MethodPost, "/api/users", map[string]string{"display_name": name, "role": "member"})
	var out struct {
		LoginLink string `json:"login_link"`
	}
	if code != http.StatusCreated || json.Unmarshal(body, &out) != nil || !strings.HasPrefix(out.LoginLink, "/login?token=") {
		a.t.Fatalf("invite %s: %d %s", name, code, body)
	}
	s.login = s.base + out.LoginLink
	return signIn(a.t, s)
}

// TestConsoleKeepsUsersApart runs tools from the console of a real quiver
// serve as two members of one organisation, with no model connected: each
// call runs through dispatch in the caller's own scope, so one member's
// workspace is invisible to the other, a tool outside the agent's
// allowlist is refused, and a tool's own failure is a result, not an
// error.
func TestConsoleKeepsUsersApart(t *testing.T) {
	model := llmtest.Start(t, llmtest.OpenAI{})
	data := t.TempDir()
	s := startServeWith(t, map[string]string{"QUIVER_DATA": data, "OPENAI_BASE_URL": model.URL})
	admin := signIn(t, s)
	def := "name: files\nmodel: openai:gpt-test\nprompt: Work with files.\ntools: [write_file, read_file, list_files, calculate]\n"
	if code, body := admin.do(http.MethodPut, "/api/agents/files", map[string]string{"definition": def}); code/100 != 2 {
		t.Fatalf("put agent: %d %s", code, body)
	}
	ana, bao := admin.invite(s, "Ana"), admin.invite(s, "Bao")

	var tools struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	code, body := ana.do(http.MethodGet, "/api/console/tools?agent=files", nil)
	if code != http.StatusOK || json.Unmarshal(body, &tools) != nil {
		t.Fatalf("console tools: %d %s", code, body)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if !json.Valid(tl.InputSchema) {
			t.Errorf("%s: schema is not JSON", tl.Name)
		}
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "write_file") || !strings.Contains(got, "calculate") || strings.Contains(got, "web_search") {
		t.Fatalf("console tools %s", got)
	}

	if r := ana.run("files", "write_file", map[string]any{"files": []map[string]string{{"path": "notes/plan.txt", "content": "Ana's secret plan"}}}); r.IsError {
		t.Fatalf("write as Ana: %s", r.Result)
	}
	if r := ana.run("files", "read_file", map[string]string{"path": "notes/plan.txt"}); r.IsError || !strings.Contains(r.Result, "Ana's secret plan") {
		t.Fatalf("read as Ana: %+v", r)
	}
	if r := bao.run("files", "list_files", map[string]string{}); strings.Contains(r.Result, "plan.txt") {
		t.Fatalf("Bao lists Ana's file: %s", r.Result)
	}
	if r := bao.run("files", "read_file", map[string]string{"path": "notes/plan.txt"}); !r.IsError || strings.Contains(r.Result, "secret") {
		t.Fatalf("Bao reads Ana's file: %+v", r)
	}
	// A tool's own failure is a result.
	if r := ana.run("files", "calculate", map[string]string{"expression": "1/0"}); !r.IsError {
		t.Fatalf("1/0: %+v", r)
	}
	// Outside the agent's allowlist: refused, nothing runs.
	code, body = ana.do(http.MethodPost, "/api/console/run", map[string]any{"agent": "files", "tool": "web_search", "arguments": map[string]string{"query": "x"}})
	if code != http.StatusBadRequest || !strings.Contains(string(body), "web_search") {
		t.Fatalf("tool outside the allowlist: %d %s", code, body)
	}
	if n := len(model.Seen()); n != 0 {
		t.Fatalf("the console called the model %d times", n)
	}
	s.stop()
}
