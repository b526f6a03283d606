// Package replicatest runs Quiver as it is deployed, for tests and
// benchmarks: real "quiver serve" processes (the binary built from this
// tree, see Binary), several replicas on one PostgreSQL database or one
// process on a SQLite data folder, with a shared data folder and key
// file, and a fake model (Model, the real OpenAI wire format) on loopback.
// It signs in, makes API tokens, creates conversations and reads turns'
// event streams (Client, Stream), stops, kills and restarts replicas, runs
// CLI commands against the same deployment, and holds a writer process to
// kill mid-write (Writer). Every process runs on loopback and ends with
// its test, failed or not. Tests only.
//
//	c := replicatest.New(t, replicatest.Options{DatabaseURL: pgtest.URL(t)})
//	a, b := c.Start(), c.Start()
//	admin := c.Admin(a)
//	conv := admin.NewConversation("assistant")
//	admin.Send(conv, "hello")         // on a
//	admin.At(b).Send(conv, "again")   // the same conversation on b
package replicatest

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/internal/childproc"
)

// Options configure a Cluster. The zero value is SQLite in a new data
// folder, one generated key, a new fake model and a self-hosted
// deployment.
type Options struct {
	// DatabaseURL is the PostgreSQL database every replica shares
	// (pgtest.URL gives a fresh one); "" means SQLite in Data.
	DatabaseURL string
	// Data is the data folder every replica shares; "" means a new
	// temporary folder.
	Data string
	// Model is the fake model the replicas call; nil starts one.
	Model *Model
	// Network is the deployment's network mode; "" means self-hosted, so
	// that a replica may reach MCP servers and pages on loopback.
	Network string
	// Config is more of the configuration file, YAML appended after the
	// network and secrets sections the harness writes ("mcp:\n  slots: 4\n").
	Config string
	// Env are more environment variables for every process.
	Env map[string]string
}

// Cluster is one deployment: its database, data folder, key file,
// configuration and fake model, and the replicas started on them. Its
// methods report failures on the tb it was made with (With binds a
// subtest's), so they are called from that test's goroutine; Client's
// Try… methods are the ones for other goroutines.
type Cluster struct {
	// Bin is the quiver binary every process runs.
	Bin string
	// DatabaseURL is the PostgreSQL database, "" for SQLite.
	DatabaseURL string
	// Data is the shared data folder.
	Data string
	// KeyFile is the key file every replica is given (secrets.key_file).
	KeyFile string
	// ConfigFile is the configuration file every replica is given.
	ConfigFile string
	// Model is the fake model.
	Model *Model

	tb        testing.TB
	opts      Options
	transport *http.Transport
	shared    *clusterState
}

// clusterState is what every binding of a cluster (With) shares.
type clusterState struct {
	mu       sync.Mutex
	replicas []*Replica
	// firstLogin is the first-start login link a replica printed and no
	// one used yet.
	firstLogin string
}

// New prepares a cluster on tb: it writes the key file and the
// configuration, starts the fake model (unless o gives one) and builds
// the binary. It starts no replica.
func New(tb testing.TB, o Options) *Cluster {
	tb.Helper()
	c := &Cluster{Bin: Binary(tb), DatabaseURL: o.DatabaseURL, Data: o.Data, Model: o.Model, tb: tb, opts: o, shared: &clusterState{}}
	dir := tb.TempDir()
	if c.Data == "" {
		c.Data = filepath.Join(dir, "data")
	}
	if c.Model == nil {
		c.Model = StartModel(tb)
	}
	c.KeyFile = WriteKeyFile(tb, dir, "k1")
	c.ConfigFile = c.writeConfig(dir, "quiver.yaml", c.KeyFile)
	c.transport = &http.Transport{MaxIdleConnsPerHost: 64}
	tb.Cleanup(c.transport.CloseIdleConnections)
	return c
}

// With returns the cluster with its failures reported on tb, a subtest
// of the one it was made for: the processes it starts then end with tb.
func (c *Cluster) With(tb testing.TB) *Cluster {
	bound := *c
	bound.tb = tb
	return &bound
}

// Backend is "postgres" or "sqlite".
func (c *Cluster) Backend() string {
	if c.DatabaseURL != "" {
		return "postgres"
	}
	return "sqlite"
}

// writeConfig writes a configuration file for keyFile in dir and returns
// its path.
func (c *Cluster) writeConfig(dir, name, keyFile string) string {
	mode := c.opts.Network
	if mode == "" {
		mode = "self-hosted"
	}
	body := "network:\n  mode: " + mode + "\nsecrets:\n  key_file: " + keyFile + "\n" + c.opts.Config
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		c.tb.Fatalf("replicatest: write the configuration: %v", err)
	}
	return path
}

// WriteKeyFile writes a key file in dir holding one new random key with
// the id id (mode 0600, as Quiver requires) and returns its path.
func WriteKeyFile(tb testing.TB, dir, id string) string {
	tb.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	path := filepath.Join(dir, id+".key")
	if err := os.WriteFile(path, []byte(id+":"+base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		tb.Fatalf("replicatest: write a key file: %v", err)
	}
	return path
}

// Env is the environment of the cluster's processes (before
// ReplicaOptions.Env): the data folder, the database, the fake model
// behind OPENAI_BASE_URL with a made-up key, Options.Env.
func (c *Cluster) Env() map[string]string {
	vars := map[string]string{
		"QUIVER_DATA":     c.Data,
		"OPENAI_API_KEY":  "test-key",
		"OPENAI_BASE_URL": c.Model.URL,
	}
	if c.DatabaseURL != "" {
		vars["QUIVER_DATABASE_URL"] = c.DatabaseURL
	}
	for k, v := range c.opts.Env {
		vars[k] = v
	}
	return vars
}

// ReplicaOptions vary one replica from the cluster's.
type ReplicaOptions struct {
	// KeyFile replaces the cluster's key file (a replica with another
	// keyring).
	KeyFile string
	// Addr is the address to listen on; "" means 127.0.0.1:0.
	Addr string
	// Env are more environment variables (over the cluster's).
	Env map[string]string
	// Args are more arguments after "serve" ("--grace", "1s").
	Args []string
}

// Replica is one "quiver serve" of a cluster. A restart keeps its name
// and address.
type Replica struct {
	// Name is "replica-N", N its order of start in the cluster; its
	// database sessions carry it as application_name.
	Name string
	// URL is the base URL, "http://127.0.0.1:PORT", once it serves.
	URL string
	// Addr is URL's HOST:PORT.
	Addr string
	// Store is what the start-up line names: the backend and where it is
	// ("postgres postgres://postgres:xxxxx@127.0.0.1:5432/db?…").
	Store string
	// Login is the first-start login link it printed, or "".
	Login string
	// Process is the running (or last) process.
	*Process

	c     *Cluster
	opts  ReplicaOptions
	ready chan struct{}
}

var (
	servingRe = regexp.MustCompile(`^quiver: serving (http://\S+) \(store: (.+)\)$`)
	loginRe   = regexp.MustCompile(`(http://\S+/login\?token=\S+)`)
)

// Start starts a replica with the cluster's settings and waits until it
// serves; a replica that exits instead fails the test.
func (c *Cluster) Start() *Replica { return c.StartWith(ReplicaOptions{}) }

// StartWith starts a replica varied by o and waits until it serves.
func (c *Cluster) StartWith(o ReplicaOptions) *Replica {
	c.tb.Helper()
	r := c.Launch(o)
	if err := r.WaitReady(); err != nil {
		c.tb.Fatalf("replicatest: %v", err)
	}
	return r
}

// Launch starts a replica and returns at once, before it serves (or
// fails): WaitReady waits for its start-up line, Wait for its exit.
func (c *Cluster) Launch(o ReplicaOptions) *Replica {
	c.tb.Helper()
	c.shared.mu.Lock()
	r := &Replica{Name: fmt.Sprintf("replica-%d", len(c.shared.replicas)), c: c, opts: o}
	c.shared.replicas = append(c.shared.replicas, r)
	c.shared.mu.Unlock()
	r.launch()
	return r
}

// Replicas returns the replicas started so far, in order of start.
func (c *Cluster) Replicas() []*Replica {
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	return slices.Clone(c.shared.replicas)
}

// launch starts r's process.
func (r *Replica) launch() {
	c := r.c
	addr := r.opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	cfg := c.ConfigFile
	if r.opts.KeyFile != "" {
		cfg = c.writeConfig(c.tb.TempDir(), "quiver.yaml", r.opts.KeyFile)
	}
	vars := c.Env()
	if c.DatabaseURL != "" {
		vars["QUIVER_DATABASE_URL"] = WithApplicationName(c.tb, c.DatabaseURL, "quiver-"+r.Name)
	}
	for k, v := range r.opts.Env {
		vars[k] = v
	}
	args := append([]string{"serve", "--addr", addr, "--config", cfg}, r.opts.Args...)
	ready := make(chan struct{})
	r.ready = ready
	var once sync.Once
	watch := func(line string) {
		if m := loginRe.FindStringSubmatch(line); m != nil && strings.Contains(line, "first start") {
			r.Login = m[1]
			c.noteLogin(m[1])
		}
		if m := servingRe.FindStringSubmatch(line); m != nil {
			once.Do(func() {
				r.URL, r.Store = m[1], m[2]
				r.Addr = strings.TrimPrefix(r.URL, "http://")
				close(ready)
			})
		}
	}
	r.Process = startProcess(c.tb, r.Name, c.Bin, args, childproc.Env(vars), watch, nil)
}

// noteLogin keeps the first first-start link of the cluster.
func (c *Cluster) noteLogin(link string) {
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	if c.shared.firstLogin == "" {
		c.shared.firstLogin = link
	}
}

// WaitReady waits until the replica serves, and returns an error with
// its output when it exits first (or prints nothing for a long time).
func (r *Replica) WaitReady() error {
	return r.waitFor(r.ready, "start-up line")
}

// Serving reports whether the replica has printed its start-up line
// (it may have stopped since).
func (r *Replica) Serving() bool {
	select {
	case <-r.ready:
		return true
	default:
		return false
	}
}

// Restart starts the replica again on its address, after Stop or Kill,
// and waits until it serves.
func (r *Replica) Restart() {
	r.c.tb.Helper()
	if r.Running() {
		r.c.tb.Fatalf("replicatest: restart %s: it is still running", r.Name)
	}
	if r.Addr != "" {
		r.opts.Addr = r.Addr
	}
	r.Login = ""
	r.launch()
	if err := r.WaitReady(); err != nil {
		r.c.tb.Fatalf("replicatest: restart: %v", err)
	}
}

// WithApplicationName returns the PostgreSQL URL with its
// application_name set to name, which pg_stat_activity shows for its
// sessions.
func WithApplicationName(tb testing.TB, dbURL, name string) string {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatalf("replicatest: the database URL does not parse: %v", err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}
