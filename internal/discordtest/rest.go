package discordtest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// maxBody caps a request body; Discord refuses larger JSON bodies too.
const maxBody = 1 << 20

// reply is what a REST handler produces: a status, a JSON body (nil for
// 204) and the gateway events to send once the world is unlocked.
type reply struct {
	status int
	body   any
	events []event
}

type handlerFunc func(r *http.Request, body []byte) reply

// apiError is Discord's JSON error body.
type apiError struct {
	Message string         `json:"message"`
	Code    int            `json:"code"`
	Errors  map[string]any `json:"errors,omitempty"`
}

func fail(status, code int, msg string) reply {
	return reply{status: status, body: apiError{Message: msg, Code: code}}
}

// Discord's errors the fake returns (JSON error codes, opcodes and status
// codes topic).
var (
	errUnknownChannel     = fail(404, 10003, "Unknown Channel")
	errUnknownGuild       = fail(404, 10004, "Unknown Guild")
	errUnknownMember      = fail(404, 10007, "Unknown Member")
	errUnknownMessage     = fail(404, 10008, "Unknown Message")
	errUnknownUser        = fail(404, 10013, "Unknown User")
	errUnknownEmoji       = fail(400, 10014, "Unknown Emoji")
	errUnknownWebhook     = fail(404, 10015, "Unknown Webhook")
	errUnknownInteraction = fail(404, 10062, "Unknown interaction")
	errUnknownCommand     = fail(404, 10063, "Unknown application command")
	errMissingAccess      = fail(403, 50001, "Missing Access")
	errMissingPermissions = fail(403, 50013, "Missing Permissions")
	errNotAuthor          = fail(403, 50005, "Cannot edit a message authored by another user")
	errEmptyMessage       = fail(400, 50006, "Cannot send an empty message")
	errInvalidJSON        = fail(400, 50109, "The request body contains invalid JSON.")
	errInvalidSticker     = fail(400, 50081, "Invalid sticker sent")
	errTooManyReactions   = fail(400, 30010, "Maximum number of reactions reached (20)")
	errTooManyPins        = fail(400, 30003, "Maximum number of pins reached (50)")
	errAlreadyAcked       = fail(400, 40060, "Interaction has already been acknowledged.")
	errThreadExists       = fail(400, 160004, "A thread has already been created for this message")
	errTooLarge           = fail(413, 40005, "Request entity too large")
	errUnauthorized       = fail(401, 0, "401: Unauthorized")
	errNotFound           = fail(404, 0, "404: Not Found")
)

// invalidForm is Discord's 50035 with the failing field and its error.
func invalidForm(field, code, msg string) reply {
	r := fail(400, 50035, "Invalid Form Body")
	e := r.body.(apiError)
	e.Errors = map[string]any{field: map[string]any{"_errors": []map[string]string{{"code": code, "message": msg}}}}
	r.body = e
	return r
}

func ok(v any) reply { return reply{status: http.StatusOK, body: v} }

func noContent(evs ...event) reply { return reply{status: http.StatusNoContent, events: evs} }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, auth bool, h handlerFunc) {
		method, path, _ := strings.Cut(pattern, " ")
		mux.Handle(method+" /api/{version}"+path, s.wrap(pattern, auth, h))
	}
	api("GET /gateway", false, s.getGateway)
	api("GET /gateway/bot", true, s.getGatewayBot)
	api("GET /users/{user}", true, s.getUser)
	api("GET /channels/{channel}", true, s.getChannel)
	s.messageRoutes(api)
	s.applicationRoutes(api)
	mux.HandleFunc("GET /cdn/avatars/{user}/{file}", s.serveAvatar)
	mux.HandleFunc("GET /cdn/embed/avatars/{file}", s.serveDefaultAvatar)
	mux.HandleFunc("GET /gateway", s.gw.serve)
	mux.HandleFunc("GET /gateway/{$}", s.gw.serve)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { writeReply(w, errNotFound) })
	return mux
}

// wrap checks the API version, the bot token (where Discord needs one)
// and a configured rate limit, reads the capped body, runs h and then
// sends h's gateway events.
func (s *Server) wrap(route string, auth bool, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.PathValue("version"); v != "v9" && v != "v10" {
			writeReply(w, errNotFound)
			return
		}
		if auth && r.Header.Get("Authorization") != "Bot "+s.opts.Token {
			writeReply(w, errUnauthorized)
			return
		}
		if after, limited := s.takeRateLimit(route); limited {
			w.Header().Set("Retry-After", strconv.Itoa(int(after.Seconds()+0.999)))
			writeReply(w, reply{status: http.StatusTooManyRequests, body: map[string]any{
				"message": "You are being rate limited.", "retry_after": after.Seconds(), "global": false,
			}})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeReply(w, errTooLarge)
				return
			}
			writeReply(w, errInvalidJSON)
			return
		}
		rep := h(r, body)
		writeReply(w, rep)
		s.gw.publish(rep.events...)
	})
}

func writeReply(w http.ResponseWriter, rep reply) {
	if rep.status == http.StatusNoContent || rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	b, err := json.Marshal(rep.body)
	if err != nil {
		http.Error(w, "discordtest: encode reply: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	w.Write(b)
}

// decode unmarshals a JSON body; an empty body is an empty object.
func decode(body []byte, v any) bool {
	if len(body) == 0 {
		return true
	}
	return json.Unmarshal(body, v) == nil
}

func (s *Server) getGateway(*http.Request, []byte) reply {
	return ok(map[string]string{"url": s.GatewayURL()})
}

func (s *Server) getGatewayBot(*http.Request, []byte) reply {
	return ok(map[string]any{
		"url": s.GatewayURL(), "shards": 1,
		"session_start_limit": map[string]int{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1},
	})
}

func (s *Server) getUser(r *http.Request, _ []byte) reply {
	id := r.PathValue("user")
	if id == "@me" {
		id = s.bot.ID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.w.users[id]
	if u == nil {
		return errUnknownUser
	}
	return ok(toWireUser(*u))
}

// channelFor finds a channel the bot can see, or the error Discord gives.
func (s *Server) channelFor(r *http.Request) (*channelState, uint64, *reply) {
	ch := s.w.channels[r.PathValue("channel")]
	if ch == nil {
		return nil, 0, &errUnknownChannel
	}
	perms := s.w.permissionsIn(s.bot.ID, ch)
	if perms&PermViewChannel == 0 {
		return nil, 0, &errMissingAccess
	}
	return ch, perms, nil
}

func (s *Server) getChannel(r *http.Request, _ []byte) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, _, e := s.channelFor(r)
	if e != nil {
		return *e
	}
	return ok(toWireChannel(ch))
}
