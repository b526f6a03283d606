package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/mcpserver"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestMCPServeBadInput: bad flags are one line on stderr, exit 2, and
// nothing written to the data folder.
func TestMCPServeBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no transport", []string{"--agent", agentFile}, "exactly one of --stdio and --http"},
		{"both transports", []string{"--agent", agentFile, "--stdio", "--http", "127.0.0.1:0"}, "exactly one of --stdio and --http"},
		{"every interface", []string{"--agent", agentFile, "--http", ":8080"}, "--http: every interface is not a loopback address"},
		{"unspecified address", []string{"--agent", agentFile, "--http", "0.0.0.0:8080"}, `--http: "0.0.0.0" is not a loopback address`},
		{"host name", []string{"--agent", agentFile, "--http", "example.com:8080"}, `--http: "example.com" is not a loopback address`},
		{"public without token", []string{"--agent", agentFile, "--http", ":8080", "--public"}, "--public: also give --token-env"},
		{"empty token variable", []string{"--agent", agentFile, "--http", "127.0.0.1:0", "--token-env", "NO_SUCH_VAR"}, "--token-env: $NO_SUCH_VAR is empty"},
		{"not host:port", []string{"--agent", agentFile, "--http", "8080"}, `--http: "8080" is not host:port`},
		{"bad port", []string{"--agent", agentFile, "--http", "127.0.0.1:http"}, `port "http" is not a number`},
		{"bad origin", []string{"--agent", agentFile, "--http", "127.0.0.1:0", "--allow-origin", "example.com"}, `origin "example.com"`},
		{"bad host", []string{"--agent", agentFile, "--http", "127.0.0.1:0", "--allow-host", "https://example.com"}, `allowed host "https://example.com"`},
		{"http flag with stdio", []string{"--agent", agentFile, "--stdio", "--allow-host", "example.com"}, "go with --http"},
		{"conversation over http", []string{"--agent", agentFile, "--http", "127.0.0.1:0", "--conversation", "c"}, "--conversation goes with --stdio"},
		{"no agent", []string{"--stdio"}, "--agent is required"},
		{"argument", []string{"--agent", agentFile, "--stdio", "extra"}, `unexpected argument "extra"`},
		{"bad timezone", []string{"--agent", agentFile, "--stdio", "--tz", "Mars/Base"}, `unknown timezone "Mars/Base"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			code, out, stderr := run(t, data, append([]string{"mcp", "serve"}, c.args...)...)
			if code != 2 || out != "" || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, c.want)
			}
			if entries, _ := os.ReadDir(data); len(entries) > 0 {
				t.Errorf("data folder written: %v", entries)
			}
		})
	}
}

// stdioServe is "quiver mcp serve --stdio" run in-process on pipes, with
// an MCP client connected to it (err is the connection's: a serve that
// refused to start closes its pipes, so Connect fails).
type stdioServe struct {
	cs     *mcp.ClientSession
	err    error
	stderr *bytes.Buffer
	exit   chan int
	out    io.Closer
}

// serveStdio starts "quiver mcp serve --stdio ARGS" on the data folder,
// at fixedNow, and connects a client.
func serveStdio(t *testing.T, data string, args ...string) *stdioServe {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	s := &stdioServe{stderr: &bytes.Buffer{}, exit: make(chan int, 1), out: clientOut}
	env := app.Env{
		Stdin: serverIn, Stdout: serverOut, Stderr: s.stderr,
		Now:    func() time.Time { return fixedNow },
		Getenv: func(k string) string { return map[string]string{"QUIVER_DATA": data}[k] },
	}
	go func() {
		code := cli.Main(context.Background(), append([]string{"mcp", "serve", "--stdio"}, args...), env)
		serverOut.Close()
		serverIn.Close()
		s.exit <- code
	}()
	s.cs, s.err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	return s
}

// wait closes the client's side of standard input and returns the exit
// status of the serve.
func (s *stdioServe) wait() int {
	s.out.Close()
	return <-s.exit
}

// TestMCPServeStdio drives "quiver mcp serve --stdio" through Main with
// pipes and the SDK client: the listed tools are the agent's toolset, calls
// go through dispatch (refusal, stored result read back in the session),
// the session's turn is recorded, and closing standard input ends the
// command with status 0.
func TestMCPServeStdio(t *testing.T) {
	data := t.TempDir()
	who := []string{"--agent", agentFile, "--user", "Ana Lima", "--org", "Acme Corp"}
	_, turnJSON, _ := run(t, data, append([]string{"turn", "--json"}, append(who, "hi")...)...)
	var planned app.TurnOutput
	if err := json.Unmarshal([]byte(turnJSON), &planned); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range planned.Tools {
		want = append(want, d.Name)
	}

	srv := serveStdio(t, data, append([]string{"--conversation", "conv-mcp"}, who...)...)
	cs, err, stderr := srv.cs, srv.err, srv.stderr
	if err != nil {
		t.Fatalf("connect: %v (stderr %s)", err, stderr.String())
	}

	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range listed.Tools {
		got = append(got, tl.Name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools/list (-turn's toolset +listed):\n%s", diff)
	}

	if text := callTool(t, cs, "web_search", map[string]any{"query": "x"}); text != `Tool "web_search" is not available.` {
		t.Errorf("web_search = %q, want the refusal", text)
	}
	callTool(t, cs, "write_file", map[string]any{"files": []map[string]string{{"path": "big.txt", "content": strings.Repeat("line of text\n", 1000)}}})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "big.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := res.Meta[mcpserver.MetaRef].(string)
	if ref == "" {
		t.Fatalf("read_file result not stored: %+v", res.Meta)
	}
	if page := callTool(t, cs, "read_tool_result", map[string]any{"refs": []string{ref}, "maxChars": 1024, "offset": 1024}); !strings.Contains(page, "characters 1024–2048 of") {
		t.Errorf("read_tool_result = %q", page)
	}

	cs.Close()
	if code := srv.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "quiver: serving "+strconv.Itoa(len(want))+" tools of agent assistant over stdio") {
		t.Errorf("stderr = %q", stderr.String())
	}

	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored, err := st.GetResult(context.Background(), "acme-corp", "conv-mcp", ref)
	if err != nil {
		t.Fatalf("result not stored in the session's conversation: %v", err)
	}
	rec, err := st.GetTurn(context.Background(), "acme-corp", stored.TurnID)
	if err != nil {
		t.Fatalf("session turn not recorded: %v", err)
	}
	if rec.ConversationID != "conv-mcp" || rec.UserID != "ana-lima" || rec.Agent != "assistant" || !cmp.Equal(rec.Tools, want) {
		t.Errorf("turn record = %+v", rec)
	}
	if len(rec.Excluded) == 0 || slices.ContainsFunc(rec.Excluded, func(e store.Exclusion) bool { return e.Reason == "" || slices.Contains(want, e.Name) }) {
		t.Errorf("turn record's exclusions = %+v, want a reason for each tool left out", rec.Excluded)
	}
}

// TestMCPServeHTTP: "quiver mcp serve --http 127.0.0.1:0" prints its URL,
// serves a client there with the configured token, refuses one without,
// and returns 0 when its context ends.
func TestMCPServeHTTP(t *testing.T) {
	url, stop := startHTTP(t, t.TempDir(), map[string]string{"MCP_TOKEN": "tok-123"}, "--token-env", "MCP_TOKEN")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: bearerClient("tok-123"), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := callTool(t, cs, "calculate", map[string]any{"expression": "6*7"}); text != "42" {
		t.Errorf("calculate = %q", text)
	}
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("connect without token: %v", err)
	}
	cs.Close()
	if code, stderr := stop(); code != 0 {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// startHTTP runs "quiver mcp serve --http 127.0.0.1:0" for the example
// agent in the background and returns its endpoint URL, read from stderr,
// and a function that cancels it and returns its exit status and stderr.
func startHTTP(t *testing.T, data string, vars map[string]string, extra ...string) (string, func() (int, string)) {
	t.Helper()
	pr, pw := io.Pipe()
	var rest syncBuf
	env := app.Env{
		Stdout: io.Discard, Stderr: pw,
		Getenv: func(k string) string {
			if k == "QUIVER_DATA" {
				return data
			}
			return vars[k]
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	go func() {
		code := cli.Main(ctx, append([]string{"mcp", "serve", "--agent", agentFile, "--http", "127.0.0.1:0"}, extra...), env)
		pw.Close()
		exit <- code
	}()
	lines := bufio.NewScanner(pr)
	url := ""
	for url == "" && lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "quiver: serving MCP at "); ok {
			url = u
		} else {
			rest.WriteString(lines.Text() + "\n")
		}
	}
	drained := make(chan struct{})
	go func() {
		for lines.Scan() {
			rest.WriteString(lines.Text() + "\n")
		}
		close(drained)
	}()
	stopped := false
	stop := func() (int, string) {
		if stopped {
			return 0, ""
		}
		stopped = true
		cancel()
		code := <-exit
		<-drained
		return code, rest.String()
	}
	t.Cleanup(func() { stop() })
	if url == "" {
		code, stderr := stop()
		t.Fatalf("no URL printed (exit %d): %s", code, stderr)
	}
	return url, stop
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// callTool calls a tool that must answer with one text block and returns it.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// bearerClient sends token as a bearer token on every request.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
