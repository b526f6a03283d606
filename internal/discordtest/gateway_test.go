package discordtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

func TestOpenReadyGuildCreateAndMessageCreate(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddSticker(Sticker{GuildID: f.guild.ID, Name: "wave"})
	openSession(t, f.srv, f.dg)

	r := recv(t, f.ready, "READY")
	if r.User.ID != f.srv.Bot().ID || !r.User.Bot || r.SessionID == "" {
		t.Errorf("READY user %+v session %q", r.User, r.SessionID)
	}
	// discordgo's state rewrites READY's guild objects on GUILD_CREATE, so
	// only their number is stable here; TestGatewayWireProtocol reads them.
	if len(r.Guilds) != 1 {
		t.Errorf("READY has %d guilds, want 1", len(r.Guilds))
	}
	g := recv(t, f.guilds, "GUILD_CREATE")
	if g.Name != "Quiver Test" || len(g.Channels) != 1 || g.Channels[0].ID != f.text.ID || len(g.Stickers) != 1 {
		t.Errorf("GUILD_CREATE %+v", g.Guild)
	}
	if len(g.Members) != 1 || g.Members[0].User.ID != f.srv.Bot().ID {
		t.Errorf("GUILD_CREATE members %+v, want the bot alone without GUILD_MEMBERS", g.Members)
	}
	if len(g.Roles) != 1 || g.Roles[0].ID != f.guild.ID || g.Roles[0].Permissions != int64(PermDefaultEveryone) {
		t.Errorf("GUILD_CREATE roles %+v, want @everyone only", g.Roles)
	}
	if n := f.srv.Connections(); n != 1 {
		t.Errorf("Connections = %d, want 1", n)
	}

	sent := f.srv.SendMessage(f.text.ID, f.alice.User.ID, "hello bot")
	m := f.recvMessage(t, "hello bot")
	if m.ID != sent.ID || m.GuildID != f.guild.ID || m.ChannelID != f.text.ID {
		t.Errorf("MESSAGE_CREATE ids %s/%s/%s, want %s/%s/%s", m.ID, m.GuildID, m.ChannelID, sent.ID, f.guild.ID, f.text.ID)
	}
	if m.Author.ID != f.alice.User.ID || m.Author.GlobalName != "Alice" || m.Author.Avatar != "a1b2c3d4" {
		t.Errorf("author %+v", m.Author)
	}
	if m.Member == nil || m.Member.Nick != "ali" || m.Member.JoinedAt.IsZero() {
		t.Errorf("member %+v, want nick ali with joined_at", m.Member)
	}
	if !m.Timestamp.Equal(f.clock.Now()) {
		t.Errorf("timestamp %v, want %v", m.Timestamp, f.clock.Now())
	}
}

// Without MESSAGE_CONTENT a bot sees content only where it is mentioned,
// as on Discord.
func TestMessageContentIntent(t *testing.T) {
	f := newFixture(t, &Options{})
	f.dg.Identify.Intents = discordgo.IntentsAllWithoutPrivileged
	f.open(t)
	f.srv.SendMessage(f.text.ID, f.alice.User.ID, "secret")
	if m := recv(t, f.messages, "MESSAGE_CREATE"); m.Content != "" {
		t.Errorf("content %q without the intent, want empty", m.Content)
	}
	mention := "hi <@" + f.srv.Bot().ID + ">"
	f.srv.SendMessage(f.text.ID, f.alice.User.ID, mention)
	if m := recv(t, f.messages, "MESSAGE_CREATE"); m.Content != mention {
		t.Errorf("content %q when mentioned, want %q", m.Content, mention)
	}
}

func TestOpenRefusesPrivilegedIntentNotEnabled(t *testing.T) {
	f := newFixture(t, &Options{})
	err := f.dg.Open()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != closeDisallowedIntents {
		t.Fatalf("Open = %v, want close %d", err, closeDisallowedIntents)
	}
}

func TestOpenRefusesWrongToken(t *testing.T) {
	f := newFixture(t, nil)
	f.dg.Token, f.dg.Identify.Token = "Bot wrong", "Bot wrong"
	err := f.dg.Open()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != closeAuthFailed {
		t.Fatalf("Open = %v, want close %d", err, closeAuthFailed)
	}
	if n := f.srv.Connections(); n != 0 {
		t.Errorf("Connections = %d, want 0", n)
	}
}

// After a dropped connection discordgo resumes its session and gets the
// dispatch it missed; after an invalidated one it identifies again.
func TestReconnectAfterDisconnect(t *testing.T) {
	f := newFixture(t, nil)
	resumed := make(chan *discordgo.Resumed, 1)
	f.dg.AddHandler(func(_ *discordgo.Session, e *discordgo.Resumed) { resumed <- e })
	f.open(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()

	f.srv.Disconnect()
	if n := f.srv.Connections(); n != 0 {
		t.Fatalf("Connections after Disconnect = %d, want 0", n)
	}
	f.srv.SendMessage(f.text.ID, f.alice.User.ID, "while you were away")
	f.recvMessage(t, "while you were away")
	recv(t, resumed, "RESUMED")
	if err := f.srv.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("no reconnect: %v", err)
	}
	if n := f.srv.Sessions(); n != 1 {
		t.Errorf("Sessions = %d after a resume, want 1", n)
	}
	select {
	case r := <-f.ready:
		t.Errorf("a resume sent READY %+v", r)
	default:
	}

	f.srv.InvalidateSessions()
	r := recv(t, f.ready, "READY after invalid session")
	if r.SessionID == "" {
		t.Error("new READY without a session id")
	}
	if err := f.srv.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("no connection after re-identify: %v", err)
	}
	f.srv.SendMessage(f.text.ID, f.alice.User.ID, "welcome back")
	f.recvMessage(t, "welcome back")
}

// wireConn speaks the gateway protocol by hand, to check the frames
// themselves rather than what discordgo makes of them.
type wireConn struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialGateway(t *testing.T, srv *Server, query string) *wireConn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(srv.GatewayURL()+"/?"+query, nil)
	if err != nil {
		t.Fatalf("dial gateway: %v", err)
	}
	t.Cleanup(func() { ws.Close() })
	return &wireConn{t: t, ws: ws}
}

type wireFrame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

func (c *wireConn) read() (wireFrame, error) {
	var f wireFrame
	mt, msg, err := c.ws.ReadMessage()
	if err != nil {
		return f, err
	}
	if mt != websocket.TextMessage {
		c.t.Fatalf("frame type %d, want text", mt)
	}
	return f, json.Unmarshal(msg, &f)
}

func (c *wireConn) send(v string) {
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(v)); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func closeCode(err error) int {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

func TestGatewayWireProtocol(t *testing.T) {
	srv := Start(t)
	srv.AddGuild(Guild{Name: "g1"})
	srv.AddGuild(Guild{Name: "g2"})
	c := dialGateway(t, srv, "v=10&encoding=json")
	hello, err := c.read()
	if err != nil || hello.Op != opHello || !strings.Contains(string(hello.D), `"heartbeat_interval":41250`) {
		t.Fatalf("first frame %+v %s, %v; want HELLO with 41250", hello, hello.D, err)
	}
	c.send(`{"op":1,"d":null}`)
	if ack, err := c.read(); err != nil || ack.Op != opHeartbeatAck {
		t.Fatalf("after heartbeat %+v, %v; want op 11", ack, err)
	}
	c.send(`{"op":2,"d":{"token":"test-token","intents":513,"properties":{"os":"linux"}}}`)
	var got []string
	for i := 0; i < 3; i++ {
		f, err := c.read()
		if err != nil || f.Op != opDispatch || f.S == nil || f.T == nil {
			t.Fatalf("dispatch %d: %+v, %v", i, f, err)
		}
		got = append(got, *f.T+"#"+string(rune('0'+*f.S)))
		if *f.T == "READY" {
			var ready struct {
				Guilds []struct {
					ID          string `json:"id"`
					Unavailable bool   `json:"unavailable"`
				} `json:"guilds"`
			}
			if json.Unmarshal(f.D, &ready) != nil || len(ready.Guilds) != 2 || !ready.Guilds[0].Unavailable {
				t.Errorf("READY guilds %s, want two unavailable", f.D)
			}
		}
	}
	if diff := cmp.Diff([]string{"READY#1", "GUILD_CREATE#2", "GUILD_CREATE#3"}, got); diff != "" {
		t.Errorf("dispatches (-want +got):\n%s", diff)
	}
	c.send(`{"op":2,"d":{"token":"test-token","intents":513}}`)
	if _, err := c.read(); closeCode(err) != closeAlreadyAuthed {
		t.Errorf("second IDENTIFY: %v, want close %d", err, closeAlreadyAuthed)
	}
}

func TestGatewayCloseCodes(t *testing.T) {
	tests := []struct {
		name, query, payload string
		want                 int
	}{
		{"unknown version", "v=6&encoding=json", "", closeInvalidAPIVersion},
		{"etf encoding", "v=10&encoding=etf", "", closeDecodeError},
		{"not json", "v=10", `{op:`, closeDecodeError},
		{"dispatch before identify", "v=10", `{"op":3,"d":{}}`, closeNotAuthenticated},
		{"bad token", "v=10", `{"op":2,"d":{"token":"nope","intents":1}}`, closeAuthFailed},
		{"undefined intent bit", "v=10", `{"op":2,"d":{"token":"test-token","intents":131072}}`, closeInvalidIntents},
		{"privileged intent", "v=10", `{"op":2,"d":{"token":"test-token","intents":32768}}`, closeDisallowedIntents},
		{"bad shard", "v=10", `{"op":2,"d":{"token":"test-token","intents":1,"shard":[2,2]}}`, closeInvalidShard},
		{"unknown opcode", "v=10", `{"op":2,"d":{"token":"test-token","intents":0}}` + "\n" + `{"op":42}`, closeUnknownOpcode},
	}
	srv := Start(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialGateway(t, srv, tt.query)
			f, err := c.read()
			if err == nil {
				if f.Op != opHello {
					t.Fatalf("first frame op %d, want HELLO", f.Op)
				}
				for _, p := range strings.Split(tt.payload, "\n") {
					c.send(p)
				}
			}
			for err == nil {
				_, err = c.read()
			}
			if got := closeCode(err); got != tt.want {
				t.Errorf("closed with %d (%v), want %d", got, err, tt.want)
			}
		})
	}
}

func TestGatewayResumeUnknownSessionIsInvalid(t *testing.T) {
	srv := Start(t)
	c := dialGateway(t, srv, "v=10")
	if _, err := c.read(); err != nil {
		t.Fatal(err)
	}
	c.send(`{"op":6,"d":{"token":"test-token","session_id":"nope","seq":3}}`)
	f, err := c.read()
	if err != nil || f.Op != opInvalidSession || string(f.D) != "false" {
		t.Fatalf("RESUME of an unknown session: %+v %s, %v; want op 9 false", f, f.D, err)
	}
}

func TestGuildCreateMembersWithIntent(t *testing.T) {
	f := newFixture(t, &Options{PrivilegedIntents: intentGuildMembers | intentMessageContent})
	f.dg.Identify.Intents |= discordgo.IntentGuildMembers
	f.open(t)
	g := recv(t, f.guilds, "GUILD_CREATE")
	if len(g.Members) != 2 {
		t.Errorf("GUILD_CREATE has %d members with GUILD_MEMBERS, want 2", len(g.Members))
	}
}
