package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// serving is a running "quiver serve" and its first-start login link.
type serving struct {
	base, login string
	// line is the start-up line that gave base.
	line string
	stop func() int
}

// startServe runs "quiver serve" on a free loopback port with the fake
// model server behind OPENAI_BASE_URL, and waits for the lines it prints.
func startServe(t *testing.T, data string, model *llmtest.Server) serving {
	t.Helper()
	return startServeWith(t, map[string]string{"QUIVER_DATA": data, "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": model.URL})
}

// startServeWith runs "quiver serve" on a free loopback port with exactly
// the environment vars and extra flags, and waits for the lines it prints.
func startServeWith(t *testing.T, vars map[string]string, flags ...string) serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	env := app.Env{
		Stdout: io.Discard, Stderr: pw, Now: clock.Now,
		Getenv: func(k string) string { return vars[k] },
	}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...), env)
		pw.Close()
	}()
	var s serving
	linkRe := regexp.MustCompile(`(https?://\S+)/login\?token=(\S+)`)
	servingRe := regexp.MustCompile(`serving (http://\S+)`)
	sc := bufio.NewScanner(pr)
	for s.base == "" && sc.Scan() {
		if m := linkRe.FindStringSubmatch(sc.Text()); m != nil {
			s.login = m[1] + "/login?token=" + m[2]
		}
		if m := servingRe.FindStringSubmatch(sc.Text()); m != nil {
			s.base, s.line = m[1], sc.Text()
		}
	}
	if s.base == "" {
		cancel()
		t.Fatalf("serve printed no address (exit %d)", <-done)
	}
	go io.Copy(io.Discard, pr)
	s.stop = func() int { cancel(); return <-done }
	t.Cleanup(func() { cancel() })
	return s
}

func TestServeEndToEnd(t *testing.T) {
	model := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "calculate", map[string]string{"expression": "17% * 240"})}},
		llmtest.Reply{Text: []string{"It is ", "40.8."}},
	)
	data := t.TempDir()
	s := startServe(t, data, model)
	if s.login == "" {
		t.Fatal("first start printed no login link")
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	// Following the link shows the sign-in page and changes nothing: no
	// session cookie, the link still works (a link preview fetching it
	// does not use it up).
	u, _ := url.Parse(s.base)
	hasSession := func() bool {
		for _, ck := range jar.Cookies(u) {
			if ck.Name == "quiver_session" {
				return true
			}
		}
		return false
	}
	var page []byte
	for range 2 {
		resp, err := c.Get(s.login)
		if err != nil {
			t.Fatal(err)
		}
		page, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `<strong id="account"><bdi>Admin</bdi></strong>`) {
			t.Fatalf("the login link's page: %d\n%s", resp.StatusCode, page)
		}
		if hasSession() {
			t.Fatal("following the login link set a session cookie")
		}
	}
	// Pressing Sign in posts the page's form from the page.
	m := regexp.MustCompile(`name="confirm" value="([^"]+)"`).FindStringSubmatch(string(page))
	if m == nil {
		t.Fatalf("no confirm field in the page:\n%s", page)
	}
	link, _ := url.Parse(s.login)
	form := url.Values{"token": {link.Query().Get("token")}, "confirm": {m[1]}}
	req, _ := http.NewRequest(http.MethodPost, s.base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("sign in: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/" {
		t.Errorf("signing in ended at %s, want /", resp.Request.URL)
	}
	if !hasSession() {
		t.Fatal("signing in set no session cookie")
	}
	var me struct {
		ID   string `json:"user_id"`
		Role string `json:"role"`
		CSRF string `json:"csrf_token"`
	}
	getJSON(t, c, s.base+"/api/me", &me)
	if me.ID != "admin" || me.Role != store.RoleAdmin || me.CSRF == "" {
		t.Fatalf("me: %+v", me)
	}
	// The login link works once; an anonymous caller gets 401.
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if r, err := anon.Post(s.base+"/api/login", "application/json", strings.NewReader(`{"token":"`+link.Query().Get("token")+`"}`)); err != nil || r.StatusCode != http.StatusUnauthorized {
		t.Errorf("second use of the login link: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	if r, err := anon.Get(s.login); err != nil || r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the used login link's page: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	if r, err := anon.Get(s.base + "/api/me"); err != nil || r.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous /api/me: %v %v", r, err)
	} else {
		r.Body.Close()
	}

	post := func(path, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", me.CSRF)
		req.Header.Set("X-Timezone", "Asia/Ho_Chi_Minh")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp = post("/api/conversations", `{"agent":"assistant"}`)
	var conv struct {
		ID string `json:"id"`
	}
	json.NewDecoder(resp.Body).Decode(&conv)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || conv.ID == "" {
		t.Fatalf("create conversation: %d %+v", resp.StatusCode, conv)
	}
	resp = post("/api/conversations/"+conv.ID+"/messages", `{"message":"What is 17% of 240?"}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("send: %d %s %s", resp.StatusCode, ct, b)
	}
	var types []string
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		types = append(types, ev.Type)
		if ev.Type == "text" {
			text.WriteString(ev.Text)
		}
	}
	resp.Body.Close()
	got := strings.Join(types, " ")
	for _, want := range []string{"tool_call", "tool_result", "text", "done"} {
		if !strings.Contains(got, want) {
			t.Errorf("events %q lack %s", got, want)
		}
	}
	if text.String() != "It is 40.8." {
		t.Errorf("streamed text %q", text.String())
	}
	// The browser's timezone reached the turn's context message.
	seen := model.Seen()
	if len(seen) == 0 || !strings.Contains(seen[0].Req.Messages[0].Text, "Asia/Ho_Chi_Minh") {
		t.Errorf("the context message does not carry the browser's zone")
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	// A restart is not a first start: no new link, and the turn is done.
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := st.CountOrgs(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("orgs after first start: %d %v", n, err)
	}
}

func getJSON(t *testing.T, c *http.Client, url string, v any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestServeCompletesACutShortFirstStart starts quiver serve over a data
// folder whose first start stopped right after creating the organisation:
// the admin, the example agent and a login link are made now.
func TestServeCompletesACutShortFirstStart(t *testing.T) {
	model := llmtest.Start(t, llmtest.OpenAI{})
	data := t.TempDir()
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateOrg(context.Background(), store.Org{ID: "default", Name: "Default", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	s := startServe(t, data, model)
	if s.login == "" {
		t.Fatal("no login link after a cut-short first start")
	}
	a := signIn(t, s)
	if code, body := a.do(http.MethodGet, "/api/agents/assistant", nil); code != http.StatusOK {
		t.Fatalf("example agent: %d %s", code, body)
	}
	s.stop()
	// A complete installation is left alone: no new link.
	s = startServe(t, data, model)
	if s.login != "" {
		t.Fatal("a second start printed a login link")
	}
	s.stop()
}

// TestServeRefusesAddr: --addr takes HOST:PORT on a loopback host unless
// --public; anything else is one usage line, exit 2, and no data folder.
func TestServeRefusesAddr(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"every interface", []string{"--addr", ":8080"},
			"quiver: --addr :8080 is not a loopback address; use 127.0.0.1:PORT, or add --public to serve the network\n"},
		{"unspecified address", []string{"--addr", "0.0.0.0:8080"},
			"quiver: --addr 0.0.0.0:8080 is not a loopback address; use 127.0.0.1:PORT, or add --public to serve the network\n"},
		{"host name", []string{"--addr", "example.com:8080"},
			"quiver: --addr example.com:8080 is not a loopback address; use 127.0.0.1:PORT, or add --public to serve the network\n"},
		{"no port", []string{"--addr", "8080"}, `quiver: --addr "8080": give HOST:PORT, e.g. 127.0.0.1:8080` + "\n"},
		{"no port, public", []string{"--addr", "example.com", "--public"}, `quiver: --addr "example.com": give HOST:PORT, e.g. 127.0.0.1:8080` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			code, out, stderr := run(t, data, append([]string{"serve"}, tc.args...)...)
			if code != 2 || out != "" || stderr != tc.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, tc.want)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("the data folder exists after a refused --addr (%v)", err)
			}
		})
	}
}

// TestServeRefusesSecondServerOnSQLite: a second "quiver serve" on the
// same SQLite data folder stops before writing anything (it would mark
// the first one's running turns interrupted) and says that several
// replicas need PostgreSQL; the first keeps serving, and names its store.
func TestServeRefusesSecondServerOnSQLite(t *testing.T) {
	model := llmtest.Start(t, llmtest.OpenAI{})
	data := t.TempDir()
	first := startServe(t, data, model)
	if want := "(store: sqlite " + filepath.Join(data, "quiver.db") + ")"; !strings.HasSuffix(first.line, want) {
		t.Errorf("start-up line %q does not end with %q", first.line, want)
	}
	code, _, stderr := run(t, data, "serve", "--addr", "127.0.0.1:0")
	if code != 1 || !strings.Contains(stderr, "another quiver server is running") || !strings.Contains(stderr, "PostgreSQL") {
		t.Fatalf("second serve: exit %d, stderr %q", code, stderr)
	}
	resp, err := http.Get(first.base + "/healthz")
	if err != nil {
		t.Fatalf("the first server after the refusal: %v", err)
	}
	resp.Body.Close()
	if code := first.stop(); code != 0 {
		t.Errorf("first serve exit %d", code)
	}
	// Once the first has stopped, the folder serves again.
	again := startServe(t, data, model)
	again.stop()
}
