package discordtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes and close codes (opcodes and status codes topic).
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opPresenceUpdate = 3
	opVoiceState     = 4
	opResume         = 6
	opRequestMembers = 8
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatAck   = 11

	closeUnknownOpcode     = 4001
	closeDecodeError       = 4002
	closeNotAuthenticated  = 4003
	closeAuthFailed        = 4004
	closeAlreadyAuthed     = 4005
	closeInvalidShard      = 4010
	closeInvalidAPIVersion = 4012
	closeInvalidIntents    = 4013
	closeDisallowedIntents = 4014

	// maxClientPayload is Discord's limit on what a client may send.
	maxClientPayload = 4096
	// replayBuffer is how many dispatches a session keeps for RESUME.
	replayBuffer = 1000
	writeTimeout = 10 * time.Second
)

// Intents that gate dispatches (gateway topic, list of intents).
const (
	intentGuilds         uint64 = 1 << 0
	intentGuildMembers   uint64 = 1 << 1
	intentGuildMessages  uint64 = 1 << 9
	intentGuildReactions uint64 = 1 << 10
	intentMessageContent uint64 = 1 << 15
	privilegedIntents           = 1<<1 | 1<<8 | intentMessageContent
	knownIntents         uint64 = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12 | 1<<13 | 1<<14 | 1<<15 | 1<<16 | 1<<20 | 1<<21 | 1<<24 | 1<<25
)

// event is one dispatch to fan out. intent 0 goes to every session;
// guild "" to every shard; redacted, when set, replaces data for a
// session without MESSAGE_CONTENT.
type event struct {
	name     string
	intent   uint64
	guild    string
	data     any
	redacted any
}

type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

type gwSession struct {
	id             string
	intents        uint64
	shard, nShards uint64
	seq            int64
	sent           []frame // the last replayBuffer dispatches, for RESUME
	conn           *gwConn // nil while disconnected
}

type gwConn struct {
	ws      *websocket.Conn
	writeMu sync.Mutex
	session *gwSession // nil until IDENTIFY or RESUME succeeds
	closed  bool
	beats   int // heartbeats received
}

// gateway serves the websocket and fans out dispatches. Lock order:
// gateway.mu before Server.mu.
type gateway struct {
	s        *Server
	upgrader websocket.Upgrader

	mu       sync.Mutex
	sessions map[string]*gwSession
	conns    map[*gwConn]bool
	changed  chan struct{} // closed and replaced when the live count changes
}

func newGateway(s *Server) *gateway {
	return &gateway{
		s:        s,
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		sessions: map[string]*gwSession{},
		conns:    map[*gwConn]bool{},
		changed:  make(chan struct{}),
	}
}

func (c *gwConn) write(f frame) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.ws.WriteJSON(f)
}

func (c *gwConn) closeWith(code int, reason string) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	c.ws.Close()
}

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("discordtest: encode gateway payload: " + err.Error())
	}
	return b
}

// serve upgrades a gateway connection, sends HELLO and reads the client's
// opcodes until it goes away.
func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the client already
	}
	c := &gwConn{ws: ws}
	defer g.drop(c)
	ws.SetReadLimit(maxClientPayload)
	if v := r.URL.Query().Get("v"); v != "9" && v != "10" {
		c.closeWith(closeInvalidAPIVersion, "Invalid API version")
		return
	}
	if enc := r.URL.Query().Get("encoding"); enc != "" && enc != "json" {
		c.closeWith(closeDecodeError, "Error while decoding payload.")
		return
	}
	g.mu.Lock()
	g.conns[c] = true
	g.mu.Unlock()
	hello := map[string]int64{"heartbeat_interval": g.s.opts.HeartbeatInterval.Milliseconds()}
	if c.write(frame{Op: opHello, D: rawJSON(hello)}) != nil {
		return
	}
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if !g.handle(c, msg) {
			return
		}
	}
}

// handle runs one client payload; false ends the connection.
func (g *gateway) handle(c *gwConn, msg []byte) bool {
	var in struct {
		Op int             `json:"op"`
		D  json.RawMessage `json:"d"`
	}
	if json.Unmarshal(msg, &in) != nil {
		c.closeWith(closeDecodeError, "Error while decoding payload.")
		return false
	}
	g.mu.Lock()
	authed := c.session != nil
	g.mu.Unlock()
	switch {
	case in.Op == opHeartbeat:
		g.mu.Lock()
		if c.beats++; c.beats == 1 {
			g.notifyLocked()
		}
		g.mu.Unlock()
		return c.write(frame{Op: opHeartbeatAck, D: json.RawMessage("null")}) == nil
	case in.Op == opIdentify && authed:
		c.closeWith(closeAlreadyAuthed, "Already authenticated.")
		return false
	case in.Op == opIdentify:
		return g.identify(c, in.D)
	case in.Op == opResume && !authed:
		return g.resume(c, in.D)
	case !authed:
		c.closeWith(closeNotAuthenticated, "Not authenticated.")
		return false
	case in.Op == opPresenceUpdate, in.Op == opVoiceState, in.Op == opRequestMembers:
		return true // accepted and ignored: the fake has no presences or voice
	default:
		c.closeWith(closeUnknownOpcode, "Unknown opcode.")
		return false
	}
}

// tokenOK accepts the token with or without the "Bot " prefix: discordgo
// sends the prefixed form in IDENTIFY and Discord accepts it.
func (g *gateway) tokenOK(tok string) bool {
	return tok == g.s.opts.Token || tok == "Bot "+g.s.opts.Token
}

func (g *gateway) identify(c *gwConn, d json.RawMessage) bool {
	var in struct {
		Token   string    `json:"token"`
		Intents *uint64   `json:"intents"`
		Shard   *[2]int64 `json:"shard"`
	}
	if json.Unmarshal(d, &in) != nil {
		c.closeWith(closeDecodeError, "Error while decoding payload.")
		return false
	}
	if !g.tokenOK(in.Token) {
		c.closeWith(closeAuthFailed, "Authentication failed.")
		return false
	}
	if in.Intents == nil || *in.Intents&^knownIntents != 0 {
		c.closeWith(closeInvalidIntents, "Invalid intent(s).")
		return false
	}
	if *in.Intents&privilegedIntents&^g.s.opts.PrivilegedIntents != 0 {
		c.closeWith(closeDisallowedIntents, "Disallowed intent(s).")
		return false
	}
	sess := &gwSession{id: newSessionID(), intents: *in.Intents, nShards: 1}
	if in.Shard != nil {
		if in.Shard[1] < 1 || in.Shard[0] < 0 || in.Shard[0] >= in.Shard[1] {
			c.closeWith(closeInvalidShard, "Invalid shard.")
			return false
		}
		sess.shard, sess.nShards = uint64(in.Shard[0]), uint64(in.Shard[1])
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.closed {
		return false
	}
	g.sessions[sess.id] = sess
	g.attachLocked(c, sess)
	for _, ev := range g.s.readyEvents(sess) {
		if g.sendLocked(sess, ev) != nil {
			return false
		}
	}
	return true
}

func newSessionID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// resume reattaches a known session and replays what it missed, then
// sends RESUMED; an unknown session or sequence gets op 9 (not resumable).
func (g *gateway) resume(c *gwConn, d json.RawMessage) bool {
	var in struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	if json.Unmarshal(d, &in) != nil {
		c.closeWith(closeDecodeError, "Error while decoding payload.")
		return false
	}
	if !g.tokenOK(in.Token) {
		c.closeWith(closeAuthFailed, "Authentication failed.")
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	sess := g.sessions[in.SessionID]
	if c.closed {
		return false
	}
	if sess == nil || in.Seq > sess.seq || (len(sess.sent) > 0 && *sess.sent[0].S > in.Seq+1) {
		return c.write(frame{Op: opInvalidSession, D: json.RawMessage("false")}) == nil
	}
	if old := sess.conn; old != nil && old != c {
		g.detachLocked(old)
		go old.closeWith(websocket.CloseNormalClosure, "resumed elsewhere")
	}
	g.attachLocked(c, sess)
	for _, f := range sess.sent {
		if *f.S > in.Seq && c.write(f) != nil {
			return false
		}
	}
	return g.sendLocked(sess, event{name: "RESUMED", data: struct{}{}}) == nil
}

func (g *gateway) attachLocked(c *gwConn, sess *gwSession) {
	c.session = sess
	sess.conn = c
	g.notifyLocked()
}

func (g *gateway) detachLocked(c *gwConn) {
	if c.session != nil && c.session.conn == c {
		c.session.conn = nil
	}
	c.session = nil
	c.closed = true
	delete(g.conns, c)
	g.notifyLocked()
}

func (g *gateway) notifyLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// drop forgets a connection whose read loop ended.
func (g *gateway) drop(c *gwConn) {
	g.mu.Lock()
	g.detachLocked(c)
	g.mu.Unlock()
	c.ws.Close()
}

// sendLocked numbers a dispatch for sess, keeps it for RESUME and writes
// it to the session's connection, if any.
func (g *gateway) sendLocked(sess *gwSession, ev event) error {
	if ev.intent != 0 && sess.intents&ev.intent == 0 {
		return nil
	}
	if ev.guild != "" && sess.nShards > 1 {
		if id, err := ParseSnowflake(ev.guild); err == nil && (id>>22)%sess.nShards != sess.shard {
			return nil
		}
	}
	data := ev.data
	if ev.redacted != nil && sess.intents&intentMessageContent == 0 {
		data = ev.redacted
	}
	sess.seq++
	seq, name := sess.seq, ev.name
	f := frame{Op: opDispatch, D: rawJSON(data), S: &seq, T: &name}
	sess.sent = append(sess.sent, f)
	if len(sess.sent) > replayBuffer {
		sess.sent = sess.sent[len(sess.sent)-replayBuffer:]
	}
	if sess.conn == nil {
		return nil
	}
	return sess.conn.write(f)
}

// publish sends events to every session, connected or waiting to resume.
func (g *gateway) publish(evs ...event) {
	if len(evs) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ev := range evs {
		for _, sess := range g.sessions {
			if err := g.sendLocked(sess, ev); err != nil && sess.conn != nil {
				c := sess.conn
				g.detachLocked(c)
				go c.ws.Close()
			}
		}
	}
}

// closeAll ends every connection at shutdown.
func (g *gateway) closeAll() {
	g.mu.Lock()
	var cs []*gwConn
	for c := range g.conns {
		cs = append(cs, c)
		g.detachLocked(c)
	}
	g.mu.Unlock()
	for _, c := range cs {
		c.closeWith(websocket.CloseGoingAway, "shutting down")
	}
}

// Connections is the number of gateway connections that have identified
// or resumed and are still open.
func (s *Server) Connections() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	n := 0
	for c := range s.gw.conns {
		if c.session != nil {
			n++
		}
	}
	return n
}

// WaitConnections blocks until Connections() is n or ctx ends, whose
// error it then returns.
func (s *Server) WaitConnections(ctx context.Context, n int) error {
	for {
		s.gw.mu.Lock()
		changed := s.gw.changed
		s.gw.mu.Unlock()
		if got := s.Connections(); got == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// WaitHeartbeats blocks until every open gateway connection that has
// identified or resumed has sent at least one heartbeat, or ctx ends.
//
// Close a discordgo session only after this: discordgo v0.28.1 sends its
// first heartbeat from a goroutine right after Open, and a Close that
// overtakes it makes that goroutine fail ("close sent") and reconnect the
// closed session, forever.
func (s *Server) WaitHeartbeats(ctx context.Context) error {
	for {
		s.gw.mu.Lock()
		changed, waiting := s.gw.changed, false
		for c := range s.gw.conns {
			waiting = waiting || (c.session != nil && c.beats == 0)
		}
		s.gw.mu.Unlock()
		if !waiting {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// Disconnect drops every gateway connection without a close frame, as a
// network failure would. Sessions survive, so clients may RESUME and get
// the dispatches they missed. Connections() is 0 when it returns.
func (s *Server) Disconnect() {
	g := s.gw
	g.mu.Lock()
	var cs []*gwConn
	for c := range g.conns {
		cs = append(cs, c)
		g.detachLocked(c)
	}
	g.mu.Unlock()
	for _, c := range cs {
		c.ws.Close()
	}
}

// InvalidateSessions forgets every gateway session and drops its
// connection: the client's RESUME then gets op 9 (not resumable) and it
// must IDENTIFY again, as after a session Discord invalidated.
func (s *Server) InvalidateSessions() {
	g := s.gw
	g.mu.Lock()
	var cs []*gwConn
	for c := range g.conns {
		cs = append(cs, c)
		g.detachLocked(c)
	}
	clear(g.sessions)
	g.mu.Unlock()
	for _, c := range cs {
		c.ws.Close()
	}
}

// Sessions is how many gateway sessions the fake remembers.
func (s *Server) Sessions() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return len(s.gw.sessions)
}
