package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
)

func (s *server) conversationRoutes() {
	tags := []string{"conversations"}
	register(s, huma.Operation{
		OperationID: "create-conversation", Method: http.MethodPost, Path: "/api/conversations", Tags: tags,
		Summary: "Create an empty conversation with an agent",
		Description: "The agent must be one of the organisation's (GET /api/agents); the conversation belongs to the caller. " +
			"It is stored at once but not listed until it has a message. To store nothing until the first message, " +
			"send that message to POST /api/conversations/{id}/messages with the agent and an id of the client's own.",
		DefaultStatus: http.StatusCreated,
	}, signedIn, s.createConversation)
	register(s, huma.Operation{
		OperationID: "list-conversations", Method: http.MethodGet, Path: "/api/conversations", Tags: tags,
		Summary: "The caller's conversations, most recently updated first",
		Description: "With q, only those whose title or one of whose messages the caller wrote contains it, ignoring " +
			"case (never the assistant's text or tool results). Conversations without a message yet (created by " +
			"POST /api/conversations and never written to) are left out unless include_empty. A page holds at most " +
			"limit; next_cursor, when set, asks for the page after it.",
	}, signedIn, s.listConversations)
	register(s, huma.Operation{
		OperationID: "get-conversation", Method: http.MethodGet, Path: "/api/conversations/{id}", Tags: tags,
		Summary:     "One of the caller's conversations",
		Description: "With whether a turn is running in this server and, when its last turn is paused, the pending question.",
		Errors:      []int{http.StatusNotFound},
	}, signedIn, s.getConversation)
	register(s, huma.Operation{
		OperationID: "list-messages", Method: http.MethodGet, Path: "/api/conversations/{id}/messages", Tags: tags,
		Summary: "The conversation's transcript, oldest first: the branch shown",
		Description: "Thought-log entries (role \"thought\") are included for admins only. A conversation whose answers " +
			"were regenerated or whose messages were edited (send-message with replaces) has branches: the listing holds " +
			"the branch shown only, and turns says, for each turn of it, where it stands among the turns beside it " +
			"(index of count, for a ‹2/3› pager; POST .../branch shows another).",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.listMessages)
	register(s, huma.Operation{
		OperationID: "inspect-turn", Method: http.MethodGet, Path: "/api/conversations/{id}/inspect", Tags: tags,
		Summary: "The request a turn sends the model",
		Description: "Without turn: what message would send now. With turn: that stored turn's toolset, assembled again. " +
			"Nothing runs and nothing is written.",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.inspect)
	s.markRoutes(tags)
}

// Conversation is a conversation as the API shows it.
type Conversation struct {
	ID        string        `json:"id"`
	Agent     string        `json:"agent"`
	Title     string        `json:"title"`
	Model     string        `json:"model" doc:"The provider:model the conversation chose; \"\" runs on the agent's own (GET .../models)."`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
	Running   bool          `json:"running" doc:"A turn of this conversation is running: on any replica for GET one conversation, on this server in a list."`
	Pause     *PendingPause `json:"pause,omitempty" doc:"The pending clarifying question when the last turn is paused (GET one conversation only)."`
	Parent    *ThreadParent `json:"parent,omitempty" doc:"Set when the conversation is a thread: where it was started (GET one conversation only)."`
}

// PendingPause is a paused turn's question, answered with POST .../answer.
type PendingPause struct {
	TurnID    string `json:"turn_id"`
	Question  string `json:"question"`
	Suggested string `json:"suggested,omitempty"`
}

func (s *server) conversationView(c store.Conversation) Conversation {
	return Conversation{
		ID: c.ID, Agent: c.Agent, Title: c.Title, Model: c.Model, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		Running: s.runs.Local(c.OrgID, c.ID),
	}
}

// ownConversation returns the caller's conversation; another user's, or
// another organisation's, is as absent as a missing one (the engine's
// one ownership rule, engine.OwnConversation).
func (s *server) ownConversation(ctx context.Context, a *auth, id string) (store.Conversation, error) {
	c, err := engine.OwnConversation(ctx, s.st, a.OrgID, a.UserID, id)
	if errors.Is(err, engine.ErrNoConversation) {
		return store.Conversation{}, notFound("no such conversation")
	}
	return c, err
}

type createConversationInput struct {
	Body struct {
		Agent string `json:"agent" minLength:"1" doc:"The agent's name."`
		Title string `json:"title,omitempty" maxLength:"200"`
	}
}

type conversationOutput struct{ Body Conversation }

func (s *server) createConversation(ctx context.Context, in *createConversationInput) (*conversationOutput, error) {
	a := authFrom(ctx)
	if _, err := s.st.GetAgent(ctx, a.OrgID, in.Body.Agent); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, apiErr(http.StatusBadRequest, "unknown_agent", "no agent named "+strconv.Quote(in.Body.Agent))
		}
		return nil, err
	}
	now := s.now()
	c := store.Conversation{
		ID: s.ids.New("conv_"), OrgID: a.OrgID, UserID: a.UserID, Agent: in.Body.Agent,
		Title: store.PlainText(in.Body.Title), CreatedAt: now, UpdatedAt: now,
	}
	if err := s.st.PutConversation(ctx, c); err != nil {
		return nil, err
	}
	return &conversationOutput{Body: s.conversationView(c)}, nil
}

// titleRunes is how long a title made from a message may be, ellipsis
// excluded.
const titleRunes = 60

// title is the title a conversation gets from its first message: the
// message's first non-blank line, trimmed, cut after 60 runes (never
// inside one) with "…" appended when cut.
func title(message string) string {
	line := strings.TrimSpace(store.PlainText(message))
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	n := 0
	for i := range line {
		if n == titleRunes {
			return line[:i] + "…"
		}
		n++
	}
	return line
}

type listConversationsInput struct {
	Limit        int    `query:"limit" minimum:"1" maximum:"500" default:"100"`
	Q            string `query:"q" maxLength:"100" doc:"Search text, at most 100 characters; blank lists everything."`
	Cursor       string `query:"cursor" maxLength:"400" doc:"next_cursor of the page before."`
	IncludeEmpty bool   `query:"include_empty" doc:"Include conversations that have no message yet."`
}

type conversationsOutput struct {
	Body struct {
		Conversations []Conversation `json:"conversations"`
		NextCursor    string         `json:"next_cursor,omitempty" doc:"Set when more may follow: pass it as cursor for the next page."`
	}
}

func (s *server) listConversations(ctx context.Context, in *listConversationsInput) (*conversationsOutput, error) {
	a := authFrom(ctx)
	q := store.ConversationQuery{OrgID: a.OrgID, UserID: a.UserID, Text: strings.TrimSpace(in.Q),
		Empty: in.IncludeEmpty, Limit: in.Limit}
	if in.Cursor != "" {
		var ok bool
		if q.After, ok = decodeCursor(in.Cursor); !ok {
			return nil, apiErr(http.StatusBadRequest, "invalid_cursor", "cursor: not a next_cursor this API gave")
		}
	}
	cs, err := s.st.FindConversations(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &conversationsOutput{}
	out.Body.Conversations = make([]Conversation, 0, len(cs))
	for _, c := range cs {
		out.Body.Conversations = append(out.Body.Conversations, s.conversationView(c))
	}
	if len(cs) == in.Limit {
		last := cs[len(cs)-1]
		out.Body.NextCursor = encodeCursor(store.ConversationCursor{UpdatedAt: last.UpdatedAt, ID: last.ID})
	}
	return out, nil
}

// encodeCursor is c as an opaque page cursor: the instant in Unix
// nanoseconds and the ID, base64url.
func encodeCursor(c store.ConversationCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.UpdatedAt.UnixNano(), 10) + " " + c.ID))
}

// decodeCursor reverses encodeCursor; false for anything it did not make.
func decodeCursor(s string) (store.ConversationCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.ConversationCursor{}, false
	}
	at, id, ok := strings.Cut(string(b), " ")
	ns, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" || !utf8.ValidString(id) {
		return store.ConversationCursor{}, false
	}
	return store.ConversationCursor{UpdatedAt: time.Unix(0, ns).UTC(), ID: id}, true
}

type conversationPath struct {
	ID string `path:"id" doc:"The conversation's id."`
}

func (s *server) getConversation(ctx context.Context, in *conversationPath) (*conversationOutput, error) {
	a := authFrom(ctx)
	c, err := s.ownConversation(ctx, a, in.ID)
	if err != nil {
		return nil, err
	}
	v := s.conversationView(c)
	if _, v.Running, err = s.runs.Running(ctx, a.OrgID, c.ID); err != nil {
		return nil, err
	}
	if v.Pause, err = s.pendingPause(ctx, a.OrgID, c.ID); err != nil {
		return nil, err
	}
	if v.Parent, err = s.threadParent(ctx, a, c.ID); err != nil {
		return nil, err
	}
	return &conversationOutput{Body: v}, nil
}

// pendingPause is the question of the conversation's last turn when that
// turn is paused; nil otherwise.
func (s *server) pendingPause(ctx context.Context, orgID, conversationID string) (*PendingPause, error) {
	ms, err := s.st.ListMessages(ctx, orgID, conversationID, 0)
	if err != nil {
		return nil, err
	}
	tree, err := s.st.TurnTree(ctx, orgID, conversationID)
	if err != nil {
		return nil, err
	}
	t, err := store.PausedTurn(ctx, s.st, orgID, tree.OnPath(ms))
	if err != nil || t == nil {
		return nil, err
	}
	return &PendingPause{TurnID: t.ID, Question: t.Question, Suggested: t.Suggested}, nil
}

// Message is one transcript entry.
type Message struct {
	Seq        int64     `json:"seq"`
	TurnID     string    `json:"turn_id,omitempty"`
	Role       string    `json:"role" enum:"user,context,assistant,tool_call,tool,thought"`
	Content    string    `json:"content"`
	ToolName   string    `json:"tool_name,omitempty"`
	ToolCallID string    `json:"tool_call_id,omitempty"`
	Ref        string    `json:"ref,omitempty" doc:"The full result's reference when content was truncated."`
	IsError    bool      `json:"is_error,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	MessageMarks
}

type listMessagesInput struct {
	ID     string `path:"id"`
	Before int64  `query:"before" minimum:"0" doc:"Only entries with seq below this (the first seq of the previous page); 0: up to the newest."`
	Limit  int    `query:"limit" minimum:"1" maximum:"1000" default:"200" doc:"At most this many entries, the newest of the range."`
}

type messagesOutput struct {
	Body struct {
		Messages []Message `json:"messages"`
		More     bool      `json:"more" doc:"Older entries exist: ask again with before = the first seq."`
		// Turns are the branch shown's turns, root first, each with its
		// siblings.
		Turns []TurnBranch `json:"turns" doc:"Each turn of the branch shown, oldest first, with where it stands among the turns beside it."`
	}
}

func (s *server) listMessages(ctx context.Context, in *listMessagesInput) (*messagesOutput, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	ms, err := s.st.ListMessages(ctx, a.OrgID, in.ID, in.Before)
	if err != nil {
		return nil, err
	}
	tree, err := s.st.TurnTree(ctx, a.OrgID, in.ID)
	if err != nil {
		return nil, err
	}
	ms = tree.OnPath(ms)
	views := make([]Message, 0, len(ms))
	for _, m := range ms {
		if m.Role == store.RoleThought && !a.admin() {
			continue
		}
		views = append(views, Message{
			Seq: m.Seq, TurnID: m.TurnID, Role: m.Role, Content: m.Content, ToolName: m.ToolName,
			ToolCallID: m.ToolCallID, Ref: m.Ref, IsError: m.IsError, CreatedAt: m.CreatedAt,
		})
	}
	if err := s.markMessages(ctx, a.OrgID, in.ID, views); err != nil {
		return nil, err
	}
	out := &messagesOutput{}
	if len(views) > in.Limit {
		views, out.Body.More = views[len(views)-in.Limit:], true
	}
	out.Body.Messages, out.Body.Turns = views, branchesOf(tree)
	return out, nil
}

type inspectInput struct {
	ID      string `path:"id"`
	Message string `query:"message" doc:"The message to inspect a new turn for."`
	Turn    string `query:"turn" doc:"A stored turn of this conversation to inspect instead."`
}

type inspectOutput struct{ Body Inspection }

func (s *server) inspect(ctx context.Context, in *inspectInput) (*inspectOutput, error) {
	a := authFrom(ctx)
	// The engine reads the conversation, once, and refuses another
	// user's as absent (engine.ErrNoConversation, a 404).
	ins, err := s.eng.Inspect(ctx, a.Caller, in.ID, in.Turn, in.Message)
	if err != nil {
		return nil, err
	}
	return &inspectOutput{Body: ins}, nil
}
