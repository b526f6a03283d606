package discordtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
)

// waitFor bounds every wait on an event: a safety net against a hung
// test, never a synchronisation.
const waitFor = 15 * time.Second

// testClock is a settable clock for Options.Now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a fake with one guild, one text channel, one human member
// and a discordgo session pointed at it (not opened).
type fixture struct {
	srv   *Server
	clock *testClock
	dg    *discordgo.Session
	guild Guild
	text  Channel
	alice Member

	ready    chan *discordgo.Ready
	guilds   chan *discordgo.GuildCreate
	messages chan *discordgo.MessageCreate
	inters   chan *discordgo.InteractionCreate
}

func newFixture(t *testing.T, opts *Options) *fixture {
	t.Helper()
	clock := &testClock{t: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)}
	if opts == nil {
		opts = &Options{PrivilegedIntents: intentMessageContent}
	}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	srv := StartWith(t, opts)
	srv.PointDiscordgo(t)
	f := &fixture{srv: srv, clock: clock,
		ready: make(chan *discordgo.Ready, 8), guilds: make(chan *discordgo.GuildCreate, 8),
		messages: make(chan *discordgo.MessageCreate, 64), inters: make(chan *discordgo.InteractionCreate, 8)}
	f.guild = srv.AddGuild(Guild{Name: "Quiver Test", EveryonePermissions: PermDefaultEveryone})
	f.text = srv.AddChannel(Channel{GuildID: f.guild.ID, Name: "general"})
	f.alice = srv.AddMember(Member{GuildID: f.guild.ID, Nick: "ali",
		User: User{Username: "alice", GlobalName: "Alice", Avatar: "a1b2c3d4"}})
	f.dg = srv.NewSession(t)
	f.dg.Identify.Intents = discordgo.IntentsAllWithoutPrivileged | discordgo.IntentMessageContent
	f.dg.AddHandler(func(_ *discordgo.Session, e *discordgo.Ready) { f.ready <- e })
	f.dg.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildCreate) { f.guilds <- e })
	f.dg.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageCreate) { f.messages <- e })
	f.dg.AddHandler(func(_ *discordgo.Session, e *discordgo.InteractionCreate) { f.inters <- e })
	return f
}

// open connects the gateway and closes it at the end of the test.
func (f *fixture) open(t *testing.T) {
	t.Helper()
	openSession(t, f.srv, f.dg)
	recv(t, f.ready, "READY")
}

// openSession opens dg and, at the end of the test, closes it once its
// first heartbeat is in (see WaitHeartbeats for discordgo's reason).
func openSession(t *testing.T, srv *Server, dg *discordgo.Session) {
	t.Helper()
	if err := dg.Open(); err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { closeSession(t, srv, dg) })
}

func closeSession(t *testing.T, srv *Server, dg *discordgo.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := srv.WaitHeartbeats(ctx); err != nil {
		t.Errorf("no first heartbeat before Close: %v", err)
	}
	dg.Close()
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("no %s within %v", what, waitFor)
		panic("unreachable")
	}
}

// recvMessage waits for the MESSAGE_CREATE whose content is want,
// skipping others (the bot's own sends are dispatched too).
func (f *fixture) recvMessage(t *testing.T, want string) *discordgo.MessageCreate {
	t.Helper()
	for {
		m := recv(t, f.messages, "MESSAGE_CREATE "+want)
		if m.Content == want {
			return m
		}
	}
}

// restErr asserts err is Discord's error with the status and code.
func restErr(t *testing.T, err error, status, code int) {
	t.Helper()
	var re *discordgo.RESTError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T), want a RESTError %d/%d", err, err, status, code)
	}
	if re.Response.StatusCode != status {
		t.Errorf("status %d, want %d (body %s)", re.Response.StatusCode, status, re.ResponseBody)
	}
	if re.Message == nil || re.Message.Code != code {
		t.Errorf("body %s, want code %d", re.ResponseBody, code)
	}
}

// sendNonce posts a message with nonce and enforce_nonce, fields
// discordgo v0.28.1's MessageSend lacks, through its generic request.
func (f *fixture) sendNonce(t *testing.T, channelID, content, nonce string) *discordgo.Message {
	t.Helper()
	body := struct {
		*discordgo.MessageSend
		Nonce        string `json:"nonce"`
		EnforceNonce bool   `json:"enforce_nonce"`
	}{&discordgo.MessageSend{Content: content}, nonce, true}
	ep := discordgo.EndpointChannelMessages(channelID)
	raw, err := f.dg.RequestWithBucketID("POST", ep, body, ep)
	if err != nil {
		t.Fatalf("send with nonce: %v", err)
	}
	var m discordgo.Message
	if err := discordgo.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode message: %v", err)
	}
	return &m
}
