package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
)

func (s *server) resumeRoutes() {
	register(s, huma.Operation{
		OperationID: "turn-events", Method: http.MethodGet, Path: "/api/conversations/{id}/events", Tags: []string{"conversations"},
		Summary: "Follow a turn's events, or resume them after a cursor, on any replica",
		Description: "Streams the recorded events of the conversation's turn (the one named by turn, else the running one) " +
			"numbered above Last-Event-ID (or after; 0 from the start), as send-message streamed them, waiting for new ones " +
			"while the turn runs on any replica, until its done or error event. A cursor needs turn (400 turn_required): " +
			"ids count within one turn. A turn whose server stopped before it finished ends with an error event, numbered " +
			"after the last, saying so. 204 when the named turn has stopped and the cursor is past its last recorded event, " +
			"or at it when that is its done or error (nothing more will come: EventSource stops reconnecting). Events are kept for runs.events_retention (1 hour by default). " +
			"404 when the conversation is not the caller's or has no such turn (409 no_turn when none runs and none is named).",
		Errors:    []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		Responses: eventStreamResponses(s.api),
	}, signedIn, s.turnEvents)
}

type eventsInput struct {
	ID          string `path:"id"`
	Turn        string `query:"turn" doc:"The turn whose events to follow (each event's turn_id); default: the running turn."`
	After       string `query:"after" doc:"Resume after this event id; Last-Event-ID wins when both are given."`
	LastEventID string `header:"Last-Event-ID" doc:"The id of the last event received (what EventSource sends when it reconnects)."`
}

// cursor is the event number to resume after: Last-Event-ID, else after,
// else 0. A value that is not a whole number ≥ 0 is a 400.
func (in *eventsInput) cursor() (int64, error) {
	v := strings.TrimSpace(in.LastEventID)
	if v == "" {
		v = strings.TrimSpace(in.After)
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, apiErr(http.StatusBadRequest, "bad_cursor", "Last-Event-ID (or after) must be a whole number, 0 or more")
	}
	return n, nil
}

func (s *server) turnEvents(ctx context.Context, in *eventsInput) (*huma.StreamResponse, error) {
	a := authFrom(ctx)
	after, err := in.cursor()
	if err != nil {
		return nil, err
	}
	if after > 0 && in.Turn == "" {
		return nil, apiErr(http.StatusBadRequest, "turn_required", "a cursor counts within one turn: name it with turn (each event's turn_id)")
	}
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	run, live, err := s.runs.Running(ctx, a.OrgID, in.ID)
	if err != nil {
		return nil, err
	}
	turnID := in.Turn
	switch {
	case turnID == "" && !live:
		return nil, apiErr(http.StatusConflict, "no_turn", "no turn of this conversation is running; name one with turn")
	case turnID == "":
		turnID = run.TurnID
	default:
		if err := s.turnOf(ctx, a.OrgID, in.ID, turnID); err != nil {
			return nil, err
		}
		if stopped := !live || run.TurnID != turnID; stopped && after > 0 {
			last, err := s.st.LastTurnEventSeq(ctx, a.OrgID, turnID)
			if err != nil {
				return nil, err
			}
			if ended, err := s.endedAt(ctx, a.OrgID, turnID, last); err != nil {
				return nil, err
			} else if after > last || ended && after == last {
				return &huma.StreamResponse{Body: func(hctx huma.Context) { hctx.SetStatus(http.StatusNoContent) }}, nil
			}
		}
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		s.followTurn(ctx, hctx, a.OrgID, in.ID, turnID, after)
	}}, nil
}

// endedAt reports whether the turn's event numbered last (its last one)
// is its done or error.
func (s *server) endedAt(ctx context.Context, orgID, turnID string, last int64) (bool, error) {
	if last == 0 {
		return false, nil
	}
	evs, err := s.st.ListTurnEvents(ctx, orgID, turnID, last-1, 1)
	if err != nil || len(evs) == 0 {
		return false, err
	}
	k := agent.EventKind(evs[0].Kind)
	return k == agent.EventDone || k == agent.EventError, nil
}

// turnOf answers 404 unless turnID is a stored turn of the conversation.
func (s *server) turnOf(ctx context.Context, orgID, conversationID, turnID string) error {
	t, err := s.st.GetTurn(ctx, orgID, turnID)
	if errors.Is(err, store.ErrNotFound) || err == nil && t.ConversationID != conversationID {
		return apiErr(http.StatusNotFound, "not_found", "the conversation has no such turn")
	}
	return err
}

// followTurn streams the turn's recorded events after the cursor until
// its end. A turn that stopped without one ends with an error event of
// the server's own, numbered after the last event (the reader's or the
// stored), so that a reader resuming after it is told 204, nothing more;
// a failure to read the events ends with one that has no id (the reader
// resumes where it was).
func (s *server) followTurn(ctx context.Context, hctx huma.Context, orgID, conversationID, turnID string, after int64) {
	_, w := humago.Unwrap(hctx)
	es := newEventStream(w)
	es.open()
	stop := es.heartbeats(s.heartbeat)
	last := after
	err := s.runs.Follow(ctx, orgID, conversationID, turnID, after, func(ev runs.Event) error {
		es.recorded(ev)
		last = ev.Seq
		return nil
	})
	stop()
	switch {
	case errors.Is(err, runs.ErrNoEnd):
		msg := "this turn's events are no longer kept; its messages are in the conversation"
		if t, terr := s.st.GetTurn(ctx, orgID, turnID); terr == nil && t.Status == store.TurnInterrupted {
			msg = "the server running this turn stopped before it finished; the turn was recorded as interrupted"
		}
		if stored, lerr := s.st.LastTurnEventSeq(ctx, orgID, turnID); lerr == nil {
			last = max(last, stored)
		}
		data, _ := json.Marshal(agent.Event{Kind: agent.EventError, ConversationID: conversationID, TurnID: turnID, Error: msg})
		es.recorded(runs.Event{Seq: last + 1, Kind: agent.EventError, Data: data})
	case err != nil && ctx.Err() == nil:
		s.internal(ctx, "turn-events", err)
		data, _ := json.Marshal(agent.Event{Kind: agent.EventError, ConversationID: conversationID, TurnID: turnID,
			Error: "the turn's events could not be read; try again"})
		es.unnumbered(agent.EventError, data)
	}
	es.close(nil)
}
