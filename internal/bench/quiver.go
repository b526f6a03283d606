package bench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/quiverhq/quiver/internal/apiclient"
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
	admin *apiclient.Client
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

// signIn trades a login link for a session.
func (d *deployment) signIn(ctx context.Context, link string) (*apiclient.Client, error) {
	cl, _, err := apiclient.SignIn(ctx, d.URL, link, d.http.Transport)
	return cl, err
}

// newUser makes a member with an API token and returns the token's
// client.
func (d *deployment) newUser(ctx context.Context, name string) (*apiclient.Client, error) {
	var made struct {
		LoginLink string `json:"login_link"`
	}
	if err := d.admin.Call(ctx, http.MethodPost, "/api/users", map[string]string{"display_name": name}, http.StatusCreated, &made); err != nil {
		return nil, err
	}
	sess, err := d.signIn(ctx, made.LoginLink)
	if err != nil {
		return nil, err
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := sess.Call(ctx, http.MethodPost, "/api/tokens", map[string]string{"label": "bench"}, http.StatusCreated, &tok); err != nil {
		return nil, err
	}
	return sess.WithToken(tok.Token), nil
}

// convo is a conversation and the client of the user it belongs to.
type convo struct {
	cl *apiclient.Client
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
				if err := cl.Call(ctx, http.MethodPost, "/api/conversations", map[string]string{"agent": "assistant"}, http.StatusCreated, &conv); err != nil {
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

// turn sends message in the conversation and reads the turn's stream to
// its done event.
func (c convo) turn(ctx context.Context, message string) error {
	req, err := c.cl.Request(ctx, http.MethodPost, "/api/conversations/"+c.id+"/messages", map[string]string{"message": message})
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	return pinnedTurn(c.cl.HTTP, req)
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
