package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/quiverhq/quiver/internal/turnstream"
)

// turnsPerUser is how many turns one user sends: under the API's
// per-user burst of 10 messages, so that no turn meets the rate limit.
const turnsPerUser = 9

var (
	servingRe   = regexp.MustCompile(`^quiver: serving (http://\S+) \(store: (.+)\)$`)
	loginRe     = regexp.MustCompile(`first start: .* at (http://\S+/login\?token=\S+)`)
	listeningRe = regexp.MustCompile(`^quiver bench [a-z-]+: listening (http://\S+)`)
)

// deployment is one Quiver server quiver bench started (quiver serve, or
// the memory probe), its data folder, and the fake model it calls.
type deployment struct {
	server *child
	URL    string
	// Store is what the start-up line names ("sqlite …", "postgres …").
	Store string
	http  *http.Client
	admin *apiClient
}

// startModel starts "quiver bench fake-model" and returns it and its URL.
func startModel(ctx context.Context, bin string) (*child, string, error) {
	c, m, err := startChild(ctx, "fake model", bin, []string{"bench", "fake-model"}, nil, listeningRe, nil)
	if err != nil {
		return nil, "", err
	}
	return c, m[1], nil
}

// startQuiver starts a Quiver server (args: "serve", or the probe's
// subcommand) on a new data folder under dir, calling the model at
// modelURL, on PostgreSQL when dbURL is set; it signs in the first-start
// admin.
func startQuiver(ctx context.Context, bin, dir string, args []string, modelURL, dbURL string, client *http.Client) (*deployment, error) {
	key := make([]byte, 32)
	rand.Read(key)
	keyFile := filepath.Join(dir, "k1.key")
	if err := os.WriteFile(keyFile, []byte("k1:"+base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "quiver.yaml")
	if err := os.WriteFile(cfg, []byte("network:\n  mode: self-hosted\nsecrets:\n  key_file: "+keyFile+"\n"+
		// The open-loop load and the memory burst run many turns of one
		// user at once: the caps on turns at once would refuse them.
		"turns:\n  max_per_user: 10000\n  max_per_server: 1000000\n"), 0o600); err != nil {
		return nil, err
	}
	env := map[string]string{"QUIVER_DATA": filepath.Join(dir, "data"), "OPENAI_API_KEY": "bench-key", "OPENAI_BASE_URL": modelURL}
	if dbURL != "" {
		env["QUIVER_DATABASE_URL"] = dbURL
	}
	// The login line comes before the serving line.
	var mu sync.Mutex
	var login string
	args = append(args, "--addr", "127.0.0.1:0", "--config", cfg)
	srv, m, err := startChild(ctx, "quiver", bin, args, env, servingRe, func(line string) {
		if m := loginRe.FindStringSubmatch(line); m != nil {
			mu.Lock()
			login = m[1]
			mu.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	d := &deployment{server: srv, URL: m[1], Store: m[2], http: client}
	mu.Lock()
	link := login
	mu.Unlock()
	if link == "" {
		srv.Close()
		return nil, fmt.Errorf("quiver printed no first-start login link (is the database new?):\n%s", srv.Log())
	}
	if d.admin, err = d.signIn(ctx, link); err != nil {
		srv.Close()
		return nil, err
	}
	return d, nil
}

// Close stops the server.
func (d *deployment) Close() { d.server.Close() }

// apiClient calls the API as one user: a session (cookie and CSRF
// token) or an API token. Safe for concurrent use.
type apiClient struct {
	base  string
	http  *http.Client
	csrf  string
	token string
}

// signIn trades a login link for a session.
func (d *deployment) signIn(ctx context.Context, link string) (*apiClient, error) {
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("token") == "" {
		return nil, fmt.Errorf("%q is not a login link", link)
	}
	jar, _ := cookiejar.New(nil)
	cl := &apiClient{base: d.URL, http: &http.Client{Jar: jar, Transport: d.http.Transport}}
	if err := cl.call(ctx, http.MethodPost, "/api/login", map[string]string{"token": u.Query().Get("token")}, http.StatusOK, nil); err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	var me struct {
		CSRF string `json:"csrf_token"`
	}
	if err := cl.call(ctx, http.MethodGet, "/api/me", nil, http.StatusOK, &me); err != nil {
		return nil, err
	}
	cl.csrf = me.CSRF
	return cl, nil
}

// newUser makes a member with an API token and returns the token's
// client.
func (d *deployment) newUser(ctx context.Context, name string) (*apiClient, error) {
	var made struct {
		LoginLink string `json:"login_link"`
	}
	if err := d.admin.call(ctx, http.MethodPost, "/api/users", map[string]string{"display_name": name}, http.StatusCreated, &made); err != nil {
		return nil, err
	}
	sess, err := d.signIn(ctx, made.LoginLink)
	if err != nil {
		return nil, err
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := sess.call(ctx, http.MethodPost, "/api/tokens", map[string]string{"label": "bench"}, http.StatusCreated, &tok); err != nil {
		return nil, err
	}
	return &apiClient{base: d.URL, http: d.http, token: tok.Token}, nil
}

// convo is a conversation and the client of the user it belongs to.
type convo struct {
	cl *apiClient
	id string
}

// conversations makes n conversations with the example agent, each
// user owning turnsPerUser of them; workers make them in parallel.
func (d *deployment) conversations(ctx context.Context, n int) ([]convo, error) {
	out := make([]convo, n)
	users := (n + turnsPerUser - 1) / turnsPerUser
	errs := make(chan error, users)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for u := range users {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cl, err := d.newUser(ctx, fmt.Sprintf("Bench %d", u))
			if err != nil {
				errs <- err
				return
			}
			for i := u * turnsPerUser; i < min(n, (u+1)*turnsPerUser); i++ {
				var conv struct {
					ID string `json:"id"`
				}
				if err := cl.call(ctx, http.MethodPost, "/api/conversations", map[string]string{"agent": "assistant"}, http.StatusCreated, &conv); err != nil {
					errs <- err
					return
				}
				out[i] = convo{cl: cl, id: conv.ID}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, fmt.Errorf("prepare conversations: %w", err)
	}
	return out, nil
}

// request builds a request with the client's credentials.
func (cl *apiClient) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.csrf != "" {
		req.Header.Set("X-CSRF-Token", cl.csrf)
	}
	if cl.token != "" {
		req.Header.Set("Authorization", "Bearer "+cl.token)
	}
	return req, nil
}

// call sends a JSON request and decodes the answer into out (when not
// nil); a status other than want is an error quoting the body.
func (cl *apiClient) call(ctx context.Context, method, path string, body any, want int, out any) error {
	req, err := cl.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// turn sends message in the conversation and reads the turn's stream to
// its done event.
func (c convo) turn(ctx context.Context, message string) error {
	req, err := c.cl.request(ctx, http.MethodPost, "/api/conversations/"+c.id+"/messages", map[string]string{"message": message})
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	return pinnedTurn(c.cl.http, req)
}

// pinnedTurn sends req, a turn of the pinned workload (to quiver serve
// or to the baseline), and reads its stream to the done event: a status
// other than 200, a broken stream or an answer without the pinned
// result is an error.
func pinnedTurn(hc *http.Client, req *http.Request) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	s := turnstream.New(resp)
	defer s.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	t, err := s.ReadTurn()
	if err != nil {
		return err
	}
	if !strings.Contains(t.Text, "42") {
		return fmt.Errorf("turn answered %q, want the pinned answer", t.Text)
	}
	return nil
}
