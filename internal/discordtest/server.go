package discordtest

import (
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configures a fake. The zero value of every field has the
// meaning its comment gives.
type Options struct {
	// Token is the bot token without the "Bot " prefix; "" means
	// "test-token". REST calls must send "Authorization: Bot <Token>".
	Token string
	// Bot is the bot's own user; an empty ID is generated, an empty
	// Username is "quiver-bot". Bot.Bot is always set.
	Bot User
	// ApplicationID is the bot's application; "" means Bot.ID, as for
	// applications whose bot user shares the application's id.
	ApplicationID string
	// PrivilegedIntents are the privileged gateway intents (GUILD_MEMBERS
	// 1<<1, GUILD_PRESENCES 1<<8, MESSAGE_CONTENT 1<<15) enabled for the
	// bot; asking for one not enabled closes the gateway with 4014.
	PrivilegedIntents uint64
	// HeartbeatInterval is sent in HELLO; zero means 41.25 s, Discord's.
	HeartbeatInterval time.Duration
	// NonceWindow is how long enforce_nonce remembers a nonce; zero means
	// five minutes (Discord documents "the past few minutes").
	NonceWindow time.Duration
	// PinPermission is the permission pin and unpin need; zero means
	// MANAGE_MESSAGES (PermPinMessages selects Discord's newer rule).
	PinPermission uint64
	// Now is the clock for timestamps and ids; nil means time.Now.
	Now func() time.Time
}

// Server is a fake Discord: REST under /api/v9 and /api/v10, the gateway
// websocket at /gateway, the CDN under /cdn, all on 127.0.0.1. Every
// method is safe for concurrent use. It is closed by the test's cleanup.
type Server struct {
	opts  Options
	appID string
	bot   User
	ids   *snowflakes
	http  *httptest.Server
	png   []byte

	mu sync.Mutex
	w  *world
	// nonces remembers enforce_nonce sends: key channel|author|nonce.
	nonces  map[string]nonceEntry
	limited map[string]rateLimit

	gw *gateway
}

type nonceEntry struct {
	messageID string
	at        time.Time
}

type rateLimit struct {
	remaining  int
	retryAfter time.Duration
}

const defaultToken = "test-token"

// Start starts a fake with default Options; see StartWith.
func Start(t testing.TB) *Server { return StartWith(t, nil) }

// StartWith starts a fake with opts (nil means defaults) on a loopback
// port and registers its shutdown with t.Cleanup. The world starts empty
// but for the bot user.
func StartWith(t testing.TB, opts *Options) *Server {
	t.Helper()
	s := &Server{w: newWorld(), nonces: map[string]nonceEntry{}, limited: map[string]rateLimit{}}
	if opts != nil {
		s.opts = *opts
	}
	s.applyDefaults()
	s.png = avatarPNG()
	s.gw = newGateway(s)

	// httptest listens on 127.0.0.1: nothing here can reach discord.com.
	s.http = httptest.NewServer(s.routes())
	t.Cleanup(func() {
		s.gw.closeAll()
		s.http.Close()
	})
	return s
}

func (s *Server) applyDefaults() {
	if s.opts.Token == "" {
		s.opts.Token = defaultToken
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if s.opts.HeartbeatInterval == 0 {
		s.opts.HeartbeatInterval = 41250 * time.Millisecond
	}
	if s.opts.NonceWindow == 0 {
		s.opts.NonceWindow = 5 * time.Minute
	}
	if s.opts.PinPermission == 0 {
		s.opts.PinPermission = PermManageMessages
	}
	s.ids = &snowflakes{now: s.opts.Now}
	s.bot = s.opts.Bot
	if s.bot.ID == "" {
		s.bot.ID = s.ids.next()
	}
	if s.bot.Username == "" {
		s.bot.Username = "quiver-bot"
	}
	s.bot.Bot = true
	s.appID = s.opts.ApplicationID
	if s.appID == "" {
		s.appID = s.bot.ID
	}
	u := s.bot
	s.w.users[u.ID] = &u
}

// URL is the fake's base URL, "http://127.0.0.1:PORT", without a slash.
func (s *Server) URL() string { return s.http.URL }

// Token is the bot token without the "Bot " prefix.
func (s *Server) Token() string { return s.opts.Token }

// AuthToken is what discordgo.New takes: "Bot " + Token.
func (s *Server) AuthToken() string { return "Bot " + s.opts.Token }

// Bot is the bot's own user.
func (s *Server) Bot() User { return s.bot }

// ApplicationID is the bot's application id.
func (s *Server) ApplicationID() string { return s.appID }

// GatewayURL is the websocket URL GET /gateway answers.
func (s *Server) GatewayURL() string {
	return "ws" + strings.TrimPrefix(s.http.URL, "http") + "/gateway"
}

// NewID returns a fresh snowflake, later than every id handed out before.
func (s *Server) NewID() string { return s.ids.next() }

func (s *Server) now() time.Time { return s.opts.Now().UTC() }

// RateLimit makes the next times requests to route answer 429 with
// retry_after (in seconds, as Discord sends it) before the route works
// again. route is a method and a path pattern below /api/vN, as the fake
// registers it, such as "POST /channels/{channel}/messages".
func (s *Server) RateLimit(route string, times int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited[route] = rateLimit{remaining: times, retryAfter: retryAfter}
}

// takeRateLimit reports whether this request to route must be refused.
func (s *Server) takeRateLimit(route string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rl, ok := s.limited[route]
	if !ok || rl.remaining <= 0 {
		return 0, false
	}
	rl.remaining--
	s.limited[route] = rl
	return rl.retryAfter, true
}

func sortedMessages(ms []*Message) []Message {
	out := make([]Message, 0, len(ms))
	for _, m := range ms {
		out = append(out, copyMessage(m))
	}
	slices.SortFunc(out, func(a, b Message) int {
		switch {
		case snowflakeLess(a.ID, b.ID):
			return -1
		case snowflakeLess(b.ID, a.ID):
			return 1
		}
		return 0
	})
	return out
}
