package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/store/sqlite"
)

// mcpPeer is a real MCP server (the official SDK) on loopback with two
// tools, recording the Authorization headers it receives.
type mcpPeer struct {
	URL   string
	auths atomic.Value // []string
	hits  atomic.Int64
}

func startMCPPeer(t *testing.T) *mcpPeer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "peer", Version: "1.0.0"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "web_search", Description: "Searches."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found: " + in.Text}}}, nil, nil
	})
	p := &mcpPeer{}
	p.auths.Store([]string(nil))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		p.auths.Store(append(p.auths.Load().([]string), r.Header.Get("Authorization")))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p.URL = hs.URL + "/mcp"
	return p
}

// writeConfig writes a deployment config in dir and returns its path.
func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "quiver.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeKeyFile writes a key file with one fresh key and returns its path.
func writeKeyFile(t *testing.T, dir, name, id string) string {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(id+":"+base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runEnv runs the CLI with extra environment variables and stdin.
func runEnv(t *testing.T, data string, vars map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runAt(t, func() time.Time { return fixedNow }, data, vars, stdin, args...)
}

// runLive is runEnv on the wall clock (clock.Now): for a command whose
// output a running server, which runs on that clock, must accept — a login
// link made at fixedNow has long expired for it.
func runLive(t *testing.T, data string, vars map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runAt(t, clock.Now, data, vars, stdin, args...)
}

func runAt(t *testing.T, now func() time.Time, data string, vars map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := app.Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Now: now,
		Getenv: func(k string) string {
			if k == "QUIVER_DATA" {
				return data
			}
			return vars[k]
		},
	}
	code := cli.Main(context.Background(), args, env)
	return code, out.String(), errb.String()
}

func TestMCPAdminLifecycle(t *testing.T) {
	peer := startMCPPeer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	keys := writeKeyFile(t, dir, "keys", "k1")
	cfg := writeConfig(t, dir, "network:\n  mode: self-hosted\nsecrets:\n  key_file: "+keys+"\nmcp:\n  slots: 2\n")
	vars := map[string]string{"PEER_TOKEN": "s3cret-token-value"}

	// Bad input: nothing stored, the server never contacted.
	code, _, stderr := runEnv(t, data, vars, "", "mcp", "add", "bad name!", peer.URL, "--config", cfg)
	if code != 2 || !strings.Contains(stderr, "name:") {
		t.Fatalf("bad name: exit %d, %q", code, stderr)
	}
	if peer.hits.Load() != 0 {
		t.Fatalf("server contacted %d times for a refused registration", peer.hits.Load())
	}

	code, out, stderr := runEnv(t, data, vars, "", "mcp", "add", "search", peer.URL, "--type", "web_search", "--token-env", "PEER_TOKEN", "--config", cfg)
	if code != 0 {
		t.Fatalf("add: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "search__echo, search__web_search") {
		t.Errorf("add output %q does not list the discovered tools by their wire names", out)
	}
	for _, a := range peer.auths.Load().([]string) {
		if a != "Bearer s3cret-token-value" {
			t.Fatalf("request without the bearer token: %q", a)
		}
	}

	// A second enabled web_search server is refused before connecting.
	before := peer.hits.Load()
	code, _, stderr = runEnv(t, data, vars, "", "mcp", "add", "search2", peer.URL, "--type", "web_search", "--config", cfg)
	if code != 2 || !strings.Contains(stderr, "already served by the enabled server") || peer.hits.Load() != before {
		t.Fatalf("second web_search: exit %d, %q, %d new requests", code, stderr, peer.hits.Load()-before)
	}

	// Listing never contacts the server and never shows the token.
	before = peer.hits.Load()
	code, out, stderr = runEnv(t, data, vars, "", "mcp", "list", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	if peer.hits.Load() != before {
		t.Error("list contacted the server")
	}
	if strings.Contains(out, "s3cret") {
		t.Fatal("list printed the token")
	}
	var views []mcpclient.View
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatal(err)
	}
	if len(views) != 1 || views[0].Token != "set" || !views[0].Enabled || views[0].Type != "web_search" || views[0].Discovery != "echo, web_search" {
		t.Fatalf("list: %+v", views)
	}
	wantNames := []mcpclient.ToolName{{Name: "search__echo", Tool: "echo"}, {Name: "search__web_search", Tool: "web_search"}}
	if diff := cmp.Diff(wantNames, views[0].Names); diff != "" {
		t.Errorf("list names (-want +got):\n%s", diff)
	}

	// The stored token is sealed, not the plaintext.
	db, err := os.ReadFile(filepath.Join(data, "quiver.db"))
	if err == nil && bytes.Contains(db, []byte("s3cret-token-value")) {
		t.Fatal("the token is stored in plaintext")
	}

	// A turn's call reaches the server's web_search, which replaced the
	// built-in (left out, so the bare name is refused); the agent allows
	// web_search, the family the server's tools take.
	agentPath := writeConfig(t, t.TempDir(), "name: a\nmodel: openai:gpt-4.1-mini\ntools: [web_search, search/echo]\n")
	code, out, stderr = runEnv(t, data, vars, "", "call", "search__web_search", "--agent", agentPath, "--args", `{"text":"quiver"}`, "--config", cfg)
	if code != 0 || !strings.Contains(out, "found: quiver") {
		t.Fatalf("call search__web_search: exit %d, out %q, err %q", code, out, stderr)
	}
	code, out, _ = runEnv(t, data, vars, "", "call", "web_search", "--agent", agentPath, "--args", `{"query":"quiver"}`, "--config", cfg)
	if code != 1 || !strings.Contains(out, `Tool "web_search" is not available.`) {
		t.Fatalf("call web_search: exit %d, out %q; want the built-in left out", code, out)
	}
	code, out, _ = runEnv(t, data, vars, "", "call", "search__echo", "--agent", agentPath, "--args", `{"text":"hi"}`, "--config", cfg)
	if code != 0 || !strings.Contains(out, "echo: hi") {
		t.Fatalf("call search__echo: exit %d, out %q", code, out)
	}

	// Disabled: the tool is gone from the turn, and the built-in does not
	// come back for a disabled server (it is simply out of the overlay).
	if code, _, stderr = runEnv(t, data, vars, "", "mcp", "disable", "search", "--config", cfg); code != 0 {
		t.Fatalf("disable: %d %s", code, stderr)
	}
	code, out, _ = runEnv(t, data, vars, "", "call", "search__echo", "--agent", agentPath, "--args", `{"text":"hi"}`, "--config", cfg)
	if code != 1 || !strings.Contains(out, `Tool "search__echo" is not available.`) {
		t.Fatalf("call after disable: exit %d, out %q", code, out)
	}

	// Remove needs --yes, then frees the slot.
	if code, _, stderr = runEnv(t, data, vars, "", "mcp", "remove", "search", "--config", cfg); code != 2 || !strings.Contains(stderr, "--yes") {
		t.Fatalf("remove without --yes: %d %q", code, stderr)
	}
	if code, _, stderr = runEnv(t, data, vars, "", "mcp", "remove", "search", "--yes", "--config", cfg); code != 0 {
		t.Fatalf("remove: %d %s", code, stderr)
	}
	code, out, _ = runEnv(t, data, vars, "", "mcp", "list", "--config", cfg)
	if code != 0 || !strings.Contains(out, "no MCP servers registered") {
		t.Fatalf("list after remove: %d %q", code, out)
	}
}

func TestMCPTokensNeedKey(t *testing.T) {
	peer := startMCPPeer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	oldKey := writeKeyFile(t, dir, "old", "old")
	withKey := writeConfig(t, dir, "network:\n  mode: self-hosted\nsecrets:\n  key_file: "+oldKey+"\n")
	code, _, stderr := runEnv(t, data, nil, "tok-from-stdin\n", "mcp", "add", "peer", peer.URL, "--token-stdin", "--config", withKey)
	if code != 0 {
		t.Fatalf("add: %d %s", code, stderr)
	}
	if got := peer.auths.Load().([]string); len(got) == 0 || got[0] != "Bearer tok-from-stdin" {
		t.Fatalf("token from stdin not sent: %q", got)
	}

	// Without a key, Quiver refuses to start while a token is stored.
	noKey := filepath.Join(t.TempDir(), "nokey.yaml")
	os.WriteFile(noKey, []byte("network:\n  mode: self-hosted\n"), 0o600)
	code, _, stderr = runEnv(t, data, nil, "", "mcp", "list", "--config", noKey)
	if code != 1 || !strings.Contains(stderr, "no encryption key is configured") {
		t.Fatalf("no key: exit %d, %q", code, stderr)
	}
	// A token cannot be added without a key either.
	code, _, stderr = runEnv(t, t.TempDir(), map[string]string{"T": "x"}, "", "mcp", "add", "p2", peer.URL, "--token-env", "T", "--config", noKey)
	if code != 2 || !strings.Contains(stderr, "no encryption key") {
		t.Fatalf("token without key: exit %d, %q", code, stderr)
	}

	// Rotation: new key first, old kept; afterwards the new key alone reads
	// the token.
	newKey := writeKeyFile(t, dir, "new", "new")
	both := filepath.Join(dir, "both")
	a, _ := os.ReadFile(newKey)
	b, _ := os.ReadFile(oldKey)
	os.WriteFile(both, append(a, b...), 0o600)
	rotCfg := writeConfig(t, t.TempDir(), "network:\n  mode: self-hosted\nsecrets:\n  key_file: "+both+"\n")
	code, out, stderr := runEnv(t, data, nil, "", "secrets", "rotate", "--config", rotCfg)
	if code != 0 || !strings.Contains(out, "re-encrypted 1 token(s) and 0 settings key(s) under key new") {
		t.Fatalf("rotate: %d %q %q", code, out, stderr)
	}
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.ListMCPServers(context.Background(), "default")
	st.Close()
	if err != nil || len(recs) != 1 || !strings.HasPrefix(recs[0].Token, "v1:new:") {
		t.Fatalf("after rotation: %v %+v", err, recs)
	}
	newOnly := writeConfig(t, t.TempDir(), "network:\n  mode: self-hosted\nsecrets:\n  key_file: "+newKey+"\n")
	agentPath := writeConfig(t, t.TempDir(), "name: a\nmodel: openai:gpt-4.1-mini\ntools: [peer/*]\n")
	code, out, stderr = runEnv(t, data, nil, "", "call", "peer__echo", "--agent", agentPath, "--args", `{"text":"rotated"}`, "--config", newOnly)
	if code != 0 || !strings.Contains(out, "echo: rotated") {
		t.Fatalf("call with the new key: %d %q %q", code, out, stderr)
	}
	if got := peer.auths.Load().([]string); got[len(got)-1] != "Bearer tok-from-stdin" {
		t.Fatalf("after rotation the server got %q", got[len(got)-1])
	}
}

func TestMCPPublicModeRefusesLocal(t *testing.T) {
	peer := startMCPPeer(t)
	code, _, stderr := runEnv(t, t.TempDir(), nil, "", "mcp", "add", "local", peer.URL)
	if code != 2 || !strings.Contains(stderr, "https") {
		t.Fatalf("http in public mode: exit %d, %q", code, stderr)
	}
	code, _, stderr = runEnv(t, t.TempDir(), nil, "", "mcp", "add", "local", strings.Replace(peer.URL, "http://", "https://", 1))
	if code != 2 || !strings.Contains(stderr, "blocked") {
		t.Fatalf("loopback in public mode: exit %d, %q", code, stderr)
	}
	if peer.hits.Load() != 0 {
		t.Fatalf("public mode contacted a loopback server %d times", peer.hits.Load())
	}
}
