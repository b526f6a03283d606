package httpapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/quiverhq/quiver/agent"
)

func (s *server) streamRoutes() {
	tags := []string{"conversations"}
	register(s, huma.Operation{
		OperationID: "send-message", Method: http.MethodPost, Path: "/api/conversations/{id}/messages", Tags: tags,
		Summary: "Send a message; the turn streams back as Server-Sent Events",
		Description: "Runs a turn (or answers the paused one) and streams its events until done or error. " +
			"Errors found before the first event are JSON errors with their status; later ones are an error event. " +
			"Closing the stream cancels the turn; POST .../cancel ends it with a done event whose stop is \"cancelled\". " +
			"An untitled conversation takes its title from the message's first line. " +
			"Rate-limited per user, with console runs (429 with Retry-After). " +
			"A user disabled while the request was on its way gets 401 unauthorized before any event; " +
			"disabled once the turn runs, its done event with stop \"cancelled\".",
		Errors:    []int{http.StatusNotFound, http.StatusConflict, http.StatusTooManyRequests},
		Responses: eventStreamResponses(s.api),
	}, signedIn, s.sendMessage)
	register(s, huma.Operation{
		OperationID: "answer-pause", Method: http.MethodPost, Path: "/api/conversations/{id}/answer", Tags: tags,
		Summary:     "Answer the paused turn's question; the turn resumes as Server-Sent Events",
		Description: "As send-message, for a conversation whose last turn is paused (409 otherwise).",
		Errors:      []int{http.StatusNotFound, http.StatusConflict, http.StatusTooManyRequests},
		Responses:   eventStreamResponses(s.api),
	}, signedIn, s.answerPause)
	register(s, huma.Operation{
		OperationID: "cancel-turn", Method: http.MethodPost, Path: "/api/conversations/{id}/cancel", Tags: tags,
		Summary: "Cancel the conversation's running turn",
		Description: "Cancels the turn this server runs for the conversation; it is recorded as interrupted and its " +
			"stream ends with a done event whose stop is \"cancelled\" (a stream with no event yet answers 200 with that " +
			"event alone). 409 when none runs here.",
		DefaultStatus: http.StatusAccepted,
		Errors:        []int{http.StatusNotFound, http.StatusConflict},
	}, signedIn, s.cancelTurn)
}

// eventKinds are the SSE event names, one per agent.EventKind.
var eventKinds = []agent.EventKind{
	agent.EventText, agent.EventToolCall, agent.EventToolResult, agent.EventPause,
	agent.EventNextActions, agent.EventUsage, agent.EventDone, agent.EventError,
}

// eventStreamResponses documents the 200 response: a text/event-stream
// of agent.Event messages, one SSE event name per kind.
func eventStreamResponses(api huma.API) map[string]*huma.Response {
	data := api.OpenAPI().Components.Schemas.Schema(reflectEvent, true, "Event")
	var kinds []*huma.Schema
	for _, k := range eventKinds {
		kinds = append(kinds, &huma.Schema{
			Title: "Event " + string(k),
			Type:  huma.TypeObject,
			Properties: map[string]*huma.Schema{
				"id":    {Type: huma.TypeInteger, Description: "Position in this stream, from 1."},
				"event": {Type: huma.TypeString, Enum: []any{string(k)}, Description: "The event name, equal to data.type."},
				"data":  data,
			},
			Required: []string{"id", "event", "data"},
		})
	}
	return map[string]*huma.Response{
		"200": {
			Description: "The turn's events, each `id: N`, `event: <type>`, `data: <Event JSON>`; comments (`: keep-alive`) may come between them. The last is done or error.",
			Content: map[string]*huma.MediaType{
				"text/event-stream": {Schema: &huma.Schema{
					Title: "Server-Sent Events",
					Type:  huma.TypeArray,
					Items: &huma.Schema{OneOf: kinds},
				}},
			},
		},
	}
}

type sendInput struct {
	ID   string `path:"id"`
	Body struct {
		Message string `json:"message" minLength:"1" doc:"The user's message."`
	}
}

type answerInput struct {
	ID   string `path:"id"`
	Body struct {
		Answer string `json:"answer" minLength:"1" doc:"The answer to the pending question (its suggested answer, or the user's own)."`
	}
}

func (s *server) sendMessage(ctx context.Context, in *sendInput) (*huma.StreamResponse, error) {
	return s.startTurn(ctx, in.ID, in.Body.Message, false)
}

func (s *server) answerPause(ctx context.Context, in *answerInput) (*huma.StreamResponse, error) {
	return s.startTurn(ctx, in.ID, in.Body.Answer, true)
}

// startTurn checks everything that can still be a JSON error (ownership
// and the pending pause, which the engine's Begin reads once; a turn
// already running; the rate limit; the caller disabled meanwhile),
// registers the turn as running, names an untitled conversation after its
// first message, and returns the stream that runs it.
func (s *server) startTurn(ctx context.Context, id, text string, answer bool) (*huma.StreamResponse, error) {
	a := authFrom(ctx)
	key := turnKey(a.OrgID, id)
	ended, unwatch := s.turns.watch(key)
	defer unwatch()
	pt, err := s.eng.Begin(ctx, a.Caller, id, text)
	if err != nil {
		return nil, s.toError(ctx, "send-message", err)
	}
	if answer && !pt.Answers() {
		return nil, apiErr(http.StatusConflict, "not_paused", "the conversation has no question waiting for an answer")
	}
	if s.turns.running(key) {
		return nil, errTurnRunning
	}
	if err := s.rateLimit(a); err != nil {
		return nil, err
	}
	turnCtx, end, err := s.trackRun(ctx, a, key)
	if err != nil {
		return nil, err
	}
	if ended() > 0 {
		// A turn of this conversation ended after Begin read it: collect
		// again, now that no other turn of it can run.
		if pt, err = s.eng.Begin(ctx, a.Caller, id, text); err != nil {
			end()
			return nil, s.toError(ctx, "send-message", err)
		}
		if answer && !pt.Answers() {
			end()
			return nil, apiErr(http.StatusConflict, "not_paused", "the conversation has no question waiting for an answer")
		}
	}
	if conv := pt.Conversation(); !answer && conv.Title == "" {
		// Before the turn, which stamps the conversation and keeps the
		// title.
		conv.Title = title(text)
		if err := s.st.PutConversation(ctx, conv); err != nil {
			end()
			return nil, err
		}
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		defer end()
		s.runTurn(turnCtx, hctx, pt)
	}}, nil
}

// rateLimit spends one of the caller's tokens (messages, answers and
// console runs share the bucket), or answers 429 with Retry-After.
func (s *server) rateLimit(a *auth) error {
	wait, ok := s.limiter.take(userKey(a.OrgID, a.UserID))
	if ok {
		return nil
	}
	secs := strconv.Itoa(int(math.Ceil(wait.Seconds())))
	return huma.ErrorWithHeaders(
		apiErr(http.StatusTooManyRequests, "rate_limited", "too many requests; try again in "+secs+"s"),
		http.Header{"Retry-After": {secs}})
}

var errTurnRunning = apiErr(http.StatusConflict, "turn_running", "a turn of this conversation is already running")

// errCancelRequested is the cause of a turn's cancellation by POST
// …/cancel or by its user being disabled (the only cause of a console
// run's), as opposed to its client leaving.
var errCancelRequested = errors.New("turn cancelled on request")

// runTurn runs the turn, streaming its events, and ends the stream. A
// turn cancelled on request ends with a done event whose stop is
// "cancelled": the engine's own, or one added when the engine stopped
// without it. Otherwise an error before any event is a JSON error
// response; after, an error event unless the engine already ended with
// done or error.
func (s *server) runTurn(ctx context.Context, hctx huma.Context, pt PendingTurn) {
	conversationID := pt.Conversation().ID
	_, w := humago.Unwrap(hctx)
	es := newEventStream(w)
	stop := es.heartbeats(s.heartbeat)
	err := s.eng.Run(ctx, pt, es.send)
	stop()
	if errors.Is(context.Cause(ctx), errCancelRequested) {
		if err != nil && !errors.Is(err, context.Canceled) {
			s.internal(ctx, "send-message", err)
		}
		es.cancelled(conversationID)
		return
	}
	var e *Error
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			// The client left: nothing it could read remains to be said.
			e = apiErr(http.StatusConflict, "cancelled", "the turn was cancelled")
		} else {
			e = s.toError(ctx, "send-message", err)
		}
	}
	if !es.close(conversationID, e) {
		_ = es.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		writeHumaError(hctx, e)
	}
}

type cancelOutput struct {
	Body struct {
		Cancelled bool `json:"cancelled"`
	}
}

func (s *server) cancelTurn(ctx context.Context, in *conversationPath) (*cancelOutput, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	if !s.turns.cancel(turnKey(a.OrgID, in.ID)) {
		return nil, apiErr(http.StatusConflict, "not_running", "no turn of this conversation is running in this server")
	}
	out := &cancelOutput{}
	out.Body.Cancelled = true
	return out, nil
}
