package httpapi

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
)

func (s *server) streamRoutes() {
	tags := []string{"conversations"}
	register(s, huma.Operation{
		OperationID: "send-message", Method: http.MethodPost, Path: "/api/conversations/{id}/messages", Tags: tags,
		Summary: "Send a message; the turn streams back as Server-Sent Events",
		Description: "Runs a turn (or answers the paused one) and streams its events until done or error. " +
			"Errors found before the first event are JSON errors with their status; later ones are an error event. " +
			"Each event's id is its number in the turn's recorded stream: closing the stream does not stop the turn, and " +
			"GET .../events resumes it from any id, on any replica. POST .../cancel ends it with a done event whose stop is \"cancelled\". " +
			"An untitled conversation takes its title from the message's first line. " +
			"Rate-limited per user, with console runs (429 with Retry-After). " +
			"Turns running at once are capped per user and per server (429 too_many_turns or server_busy, with Retry-After, nothing written). " +
			"A server whose database cannot take the turn's writes in time answers 503 unavailable with Retry-After (an error event once the stream has begun). " +
			"A turn the server stops (shutting down, or its hold on the turn lost) ends with an error event saying so, " +
			"or 503 interrupted before any event. 409 conversation_changed: another turn changed the conversation " +
			"while the message was on its way (a pause came); send it again. " +
			"A user disabled while the request was on its way gets 401 unauthorized before any event; " +
			"disabled once the turn runs, its done event with stop \"cancelled\". " +
			"402 budget_exceeded, nothing written: the caller's or the organisation's budget for this month (UTC) is used up; " +
			"a budget used up while the turn runs ends it before the next model call, with the message as text and a done event whose stop is \"budget\".",
		Errors:    []int{http.StatusPaymentRequired, http.StatusNotFound, http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable},
		Responses: eventStreamResponses(s.api),
	}, signedIn, s.sendMessage)
	register(s, huma.Operation{
		OperationID: "answer-pause", Method: http.MethodPost, Path: "/api/conversations/{id}/answer", Tags: tags,
		Summary:     "Answer the paused turn's question; the turn resumes as Server-Sent Events",
		Description: "As send-message, for a conversation whose last turn is paused (409 otherwise; 402 budget_exceeded as there).",
		Errors:      []int{http.StatusPaymentRequired, http.StatusNotFound, http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable},
		Responses:   eventStreamResponses(s.api),
	}, signedIn, s.answerPause)
	register(s, huma.Operation{
		OperationID: "cancel-turn", Method: http.MethodPost, Path: "/api/conversations/{id}/cancel", Tags: tags,
		Summary: "Cancel the conversation's running turn",
		Description: "Cancels the conversation's running turn, on whichever replica runs it (at once on this one, " +
			"within a heartbeat on another); it is recorded as interrupted and its stream ends with a done event whose " +
			"stop is \"cancelled\" (a stream with no event yet answers 200 with that event alone). 409 when none runs.",
		DefaultStatus: http.StatusAccepted,
		Errors:        []int{http.StatusNotFound, http.StatusConflict},
	}, signedIn, s.cancelTurn)
}

// eventKinds are the SSE event names, one per agent.EventKind.
var eventKinds = []agent.EventKind{
	agent.EventText, agent.EventToolCall, agent.EventToolResult, agent.EventPause,
	agent.EventNextActions, agent.EventChecklist, agent.EventMessages, agent.EventUsage, agent.EventDone, agent.EventError,
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
				"id":    {Type: huma.TypeInteger, Description: "The event's number in the turn's recorded stream, from 1 (what Last-Event-ID resumes from); absent on an error event the server adds to a stream it cannot continue."},
				"event": {Type: huma.TypeString, Enum: []any{string(k)}, Description: "The event name, equal to data.type."},
				"data":  data,
			},
			Required: []string{"event", "data"},
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
		Message string `json:"message" minLength:"1" doc:"The user's message; one that is empty once trimmed is refused (400 empty_message), nothing stored."`
		Agent   string `json:"agent,omitempty" maxLength:"64" doc:"Starts the conversation when the id names none yet (this is its first message), with this agent: the id is then the client's own, 16–64 letters, digits, '-' or '_' (a random UUID does), and the conversation is stored with this message. For a stored conversation it must be its agent."`
		Model   string `json:"model,omitempty" maxLength:"300" doc:"With agent, for a conversation not stored yet: the model of the agent's to run on (GET /api/agents/{name}/models); a stored conversation runs on its own (PATCH to change it)."`
		// Replaces makes the turn a branch beside another.
		Replaces string `json:"replaces,omitempty" maxLength:"100" doc:"Regenerate or edit-and-resend: the turn_id of a turn of this conversation. The new turn goes beside it (it follows the same earlier turn and sees the history up to there, not the turn replaced), becomes the branch shown, and the replaced one stays to page back to (POST .../branch). Send the turn's own message to regenerate its answer, or the edited text. What the replaced turn did (files written, memories saved) is not undone. 400 for a turn not of this conversation, and for a 51st version at one place (409 too_many_branches when two race past that check); nothing is stored."`
	}
}

// newConversationID is what a client may name a conversation it starts
// with its first message: long enough to be its own random id.
var newConversationID = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

type answerInput struct {
	ID   string `path:"id"`
	Body struct {
		Answer string `json:"answer" minLength:"1" doc:"The answer to the pending question (its suggested answer, or the user's own)."`
	}
}

func (s *server) sendMessage(ctx context.Context, in *sendInput) (*huma.StreamResponse, error) {
	var start *NewConversation
	switch b := in.Body; {
	case b.Agent != "" && (!newConversationID.MatchString(in.ID) || engine.CheckConversationID(in.ID) != nil):
		return nil, apiErr(http.StatusBadRequest, "invalid_conversation_id",
			"a conversation started with its first message needs an id of 16–64 letters, digits, '-' or '_' (a random UUID)")
	case b.Agent != "":
		start = &NewConversation{Agent: b.Agent, Model: b.Model}
	case b.Model != "":
		return nil, badRequest("model goes with agent, for a conversation's first message; PATCH the conversation to change its model")
	case b.Replaces != "" && start != nil:
		return nil, badRequest("replaces goes with a stored conversation's turn, not with its first message")
	}
	return s.startTurn(ctx, in.ID, turnRequest{id: in.ID, text: in.Body.Message, start: start, replaces: in.Body.Replaces})
}

func (s *server) answerPause(ctx context.Context, in *answerInput) (*huma.StreamResponse, error) {
	return s.startTurn(ctx, in.ID, turnRequest{id: in.ID, text: in.Body.Answer, answer: true})
}

// startTurn checks everything that can still be a JSON error (the caps
// on turns running at once, checked first so that a refusal reads and
// writes nothing; ownership and the pending pause, which the engine's Begin reads once; a turn
// already running on any replica; the rate limit; the caller disabled
// meanwhile), claims the conversation's run, names an untitled
// conversation after its first message, and returns the stream that runs
// it.
func (s *server) startTurn(ctx context.Context, id string, tr turnRequest) (*huma.StreamResponse, error) {
	if strings.TrimSpace(tr.text) == "" { // the engine refuses it too, for every surface
		return nil, errEmptyMessage
	}
	a := authFrom(ctx)
	release, err := s.slots.take(userKey(a.OrgID, a.UserID))
	if err != nil {
		return nil, err
	}
	// The stream's body frees the slot once it has it; until then (an
	// error, or a panic net/http recovers from) this does.
	handed := false
	defer func() {
		if !handed {
			release()
		}
	}()
	resp, err := s.claimTurn(ctx, a, tr, release)
	handed = err == nil
	return resp, err
}

// turnRequest is what a message asks of startTurn: the conversation, the
// text, whether it answers a paused turn, and how to start the
// conversation when it is not stored yet (nil: it must be).
type turnRequest struct {
	id, text string
	answer   bool
	start    *NewConversation
	// replaces names the turn the new one goes beside ("" follows the
	// branch shown).
	replaces string
}

// claimTurn is startTurn once the turn holds its slot under the caps,
// which release frees when the turn ends.
func (s *server) claimTurn(ctx context.Context, a *auth, tr turnRequest, release func()) (*huma.StreamResponse, error) {
	id, text, answer := tr.id, tr.text, tr.answer
	key := turnKey(a.OrgID, id)
	ended, unwatch := s.turns.watch(key)
	defer unwatch()
	pt, err := s.eng.Begin(ctx, a.Caller, id, text, "", tr.replaces, tr.start)
	if err != nil {
		return nil, s.toError(ctx, "send-message", err)
	}
	if answer && !pt.Answers() {
		return nil, errNotPaused
	}
	if s.runs.Local(a.OrgID, id) {
		return nil, errTurnRunning
	}
	// The turn's first writes wait for the store less than the writes of
	// turns already running: an overloaded server refuses new turns with
	// 503 before the turns it took on start failing.
	admit := store.WithWriteWait(ctx, s.admitWait)
	if err := s.rateLimit(admit, a); err != nil {
		return nil, err
	}
	run, err := s.claimRun(admit, a, pt)
	if err != nil {
		return nil, err
	}
	// The watchers hear of the end before the run is released: a request
	// that claims after the release and saw no end began after the turn
	// stopped writing.
	var once sync.Once
	end := func() {
		once.Do(func() {
			s.turns.noteEnd(key)
			run.End()
			release()
		})
	}
	if pt, err = s.fresh(ctx, a, pt, ended() > 0, tr); err != nil {
		end()
		return nil, err
	}
	if err := s.enterConversation(ctx, a, pt, text, answer); err != nil {
		end()
		return nil, err
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		defer end()
		s.runTurn(hctx, run, pt, end)
	}}, nil
}

// fresh returns pt, or pt collected again now that the run is claimed
// (no other turn of the conversation can run) when another turn ran
// after Begin read the facts. On a store this server alone serves (the
// registry is Exclusive) that can only be a turn the local watch saw end
// (ended); with other replicas it may have run on another one, so the
// conversation's last message Seq is read (one statement) and compared
// with the one the facts saw: every turn that changes what the facts hold
// appends a message first, and Seqs only grow. The turn keeps the id the
// run holds; when the conversation changed so that it would not (a pause
// came), the message is refused with 409 conversation_changed, to be sent
// again.
func (s *server) fresh(ctx context.Context, a *auth, pt PendingTurn, ended bool, tr turnRequest) (PendingTurn, error) {
	text, answer := tr.text, tr.answer
	if !ended && s.runs.Exclusive() {
		return pt, nil
	}
	last, err := s.st.LastMessageSeq(ctx, a.OrgID, pt.Conversation().ID)
	if err != nil {
		return nil, s.toError(ctx, "send-message", err)
	}
	if last == pt.LastSeq() {
		return pt, nil
	}
	again, err := s.eng.Begin(ctx, a.Caller, pt.Conversation().ID, text, pt.TurnID(), tr.replaces, tr.start)
	switch {
	case err != nil:
		return nil, s.toError(ctx, "send-message", err)
	case answer && !again.Answers():
		return nil, errNotPaused
	case again.TurnID() != pt.TurnID():
		return nil, errConversationChanged
	}
	return again, nil
}

// enterConversation stores what the turn's conversation needs before
// the turn, which stamps the conversation and keeps its title: a New one
// is claimed for the caller with its agent, model and a title from the
// message (another user who took the id meanwhile makes it a 404, as
// their conversation is to everyone else); an untitled one is named
// after the message (not an answer).
func (s *server) enterConversation(ctx context.Context, a *auth, pt PendingTurn, text string, answer bool) error {
	conv := pt.Conversation()
	switch {
	case pt.New():
		now := s.now()
		conv.Title, conv.CreatedAt, conv.UpdatedAt = title(text), now, now
		got, err := s.st.ClaimConversation(ctx, conv)
		if err == nil && got.UserID != a.UserID {
			err = notFound("no such conversation")
		}
		return err
	case !answer && conv.Title == "":
		t := title(text)
		_, err := s.st.UpdateConversation(ctx, a.OrgID, a.UserID, conv.ID, store.ConversationUpdate{Title: &t})
		return err
	}
	return nil
}

// claimRun claims pt's conversation's run for its turn, held by this
// server. It fails with errTurnRunning when a turn of the conversation
// runs on any replica, and with errDisabled's 401 when a was disabled
// after the request authenticated.
//
// The user is re-read after claiming because disabling commits, then
// asks every run of the user to stop (on any replica): a disable that
// committed before the claim reached nothing of this run, so the re-read
// sees it and refuses; one that commits after the re-read finds the run
// claimed and cancels it.
func (s *server) claimRun(ctx context.Context, a *auth, pt PendingTurn) (*runs.Run, error) {
	run, err := s.runs.Claim(ctx, runs.Turn{OrgID: a.OrgID, ConversationID: pt.Conversation().ID, TurnID: pt.TurnID(),
		UserID: a.UserID, Continues: pt.Answers()})
	if errors.Is(err, runs.ErrRunning) {
		return nil, errTurnRunning
	}
	if err != nil {
		return nil, err
	}
	u, err := s.st.GetUser(ctx, a.OrgID, a.UserID)
	if errors.Is(err, store.ErrNotFound) || err == nil && !u.DisabledAt.IsZero() {
		err = errDisabled()
	}
	if err != nil {
		run.End()
		return nil, err
	}
	return run, nil
}

// AdmitWriteWait is how long, by default (TurnLimits.AdmitWait), a turn's
// first writes (its rate-limit token, its claim on the conversation) wait
// for the store's writer before the message is refused with 503 and
// Retry-After (store.WithWriteWait); later writes wait
// store.DefaultWriteWait.
const AdmitWriteWait = time.Second

var (
	errEmptyMessage        = apiErr(http.StatusBadRequest, "empty_message", "the message is empty: write something to send")
	errTurnRunning         = apiErr(http.StatusConflict, "turn_running", "a turn of this conversation is already running")
	errNotPaused           = apiErr(http.StatusConflict, "not_paused", "the conversation has no question waiting for an answer")
	errConversationChanged = apiErr(http.StatusConflict, "conversation_changed", "the conversation changed while the message was on its way; send it again")
)

// errCancelRequested is the cause of a console run's cancellation (its
// user disabled).
var errCancelRequested = errors.New("turn cancelled on request")

// runTurn runs the turn under its run's context, which a client leaving
// does not end (the turn goes on; the client may resume its events with
// GET .../events), streaming its recorded events, and ends the stream. A
// turn cancelled on request ends with a done event whose stop is
// "cancelled": the engine's own, or one added when the engine stopped
// without it. A turn stopped by the server stopping or by a lost lease
// ends with an error event saying so (in place of the engine's done).
// Otherwise an error before any event is a JSON error response; after, an
// error event unless the engine already ended with done or error. Added
// events are recorded like the engine's, so a reader on another replica
// sees the same end. The last events (from the first done or error on)
// reach this client only after the run is released, so a client that
// sends its next message on reading them never finds the conversation
// busy.
func (s *server) runTurn(hctx huma.Context, run *runs.Run, pt PendingTurn, end func()) {
	ctx := run.Context()
	_, w := humago.Unwrap(hctx)
	es := newEventStream(w)
	var held []runs.Event // written after end; the sink runs under the run's lock
	run.SetSink(func(ev runs.Event) {
		if held != nil || ev.Kind == agent.EventDone || ev.Kind == agent.EventError {
			held = append(held, ev)
			return
		}
		es.recorded(ev)
	})
	emit := func(ev agent.Event) {
		if cause := context.Cause(ctx); ev.Kind == agent.EventDone && ctx.Err() != nil && !errors.Is(cause, runs.ErrCancelled) {
			ev = agent.Event{Kind: agent.EventError, ConversationID: ev.ConversationID, TurnID: ev.TurnID, Error: interruptedBy(cause)}
		}
		run.Emit(ev)
	}
	stop := es.heartbeats(s.heartbeat)
	err := s.eng.Run(ctx, pt, emit)
	stop()
	ev := agent.Event{ConversationID: pt.Conversation().ID, TurnID: run.TurnID()}
	var e *Error
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, runs.ErrCancelled):
		if err != nil && !errors.Is(err, context.Canceled) {
			s.internal(ctx, "send-message", err)
		}
		if run.Last() != agent.EventDone {
			ev.Kind, ev.Stop = agent.EventDone, agent.StopCancelled
			run.Emit(ev)
		}
	case ctx.Err() != nil:
		if err != nil && !errors.Is(err, context.Canceled) {
			s.internal(ctx, "send-message", err)
		}
		e = apiErr(http.StatusServiceUnavailable, "interrupted", interruptedBy(cause))
	case err != nil:
		e = s.toError(ctx, "send-message", err)
	}
	if last := run.Last(); e != nil && last != "" && last != agent.EventDone && last != agent.EventError {
		ev.Kind, ev.Error = agent.EventError, e.Detail.Message
		run.Emit(ev)
	}
	end()
	for _, ev := range held {
		es.recorded(ev)
	}
	if !es.close(e) {
		_ = es.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		writeHumaError(hctx, e)
	}
}

// interruptedBy says why a turn stopped that no one cancelled.
func interruptedBy(cause error) string {
	if errors.Is(cause, runs.ErrLeaseLost) {
		return "this server lost its hold on the turn (the database could not be reached in time); it was recorded as interrupted"
	}
	return "the server stopped before the turn finished; it was recorded as interrupted"
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
	ok, err := s.runs.Cancel(ctx, a.OrgID, in.ID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apiErr(http.StatusConflict, "not_running", "no turn of this conversation is running")
	}
	out := &cancelOutput{}
	out.Body.Cancelled = true
	return out, nil
}
