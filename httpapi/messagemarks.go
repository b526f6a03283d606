package httpapi

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/store"
)

// MessageMarks are what people and the agent did to a message besides
// writing it (store.MessageMarks): shown with each message.
type MessageMarks struct {
	Reactions []MessageReaction `json:"reactions,omitempty" doc:"Emoji on the message, in the order each was first added."`
	Pinned    bool              `json:"pinned,omitempty"`
	Edited    bool              `json:"edited,omitempty" doc:"The agent edited the message (manage_message)."`
	Deleted   bool              `json:"deleted,omitempty" doc:"The agent deleted the message: content is empty."`
	Thread    string            `json:"thread,omitempty" doc:"The id of the conversation (thread) started from this message."`
}

// MessageReaction is one emoji on a message.
type MessageReaction struct {
	Emoji string `json:"emoji"`
	Count int    `json:"count"`
	Agent bool   `json:"agent,omitempty" doc:"The agent reacted with it."`
	Mine  bool   `json:"mine,omitempty" doc:"The caller reacted with it."`
}

// ThreadParent is where a thread was started.
type ThreadParent struct {
	ConversationID string `json:"conversation_id"`
	Title          string `json:"title"`
	MessageSeq     int64  `json:"message_seq,omitempty" doc:"The message it was started from; absent when started from the conversation itself."`
}

// Thread is a conversation started in another.
type Thread struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	MessageSeq int64  `json:"message_seq,omitempty" doc:"The message it was started from; absent when started from the conversation itself."`
}

func (s *server) markRoutes(tags []string) {
	register(s, huma.Operation{
		OperationID: "list-pins", Method: http.MethodGet, Path: "/api/conversations/{id}/pins", Tags: tags,
		Summary:     "The conversation's pinned messages, latest pin first",
		Description: "At most 50 (a conversation's limit of pins), each with its marks.",
		Errors:      []int{http.StatusNotFound},
	}, signedIn, s.listPins)
	register(s, huma.Operation{
		OperationID: "list-threads", Method: http.MethodGet, Path: "/api/conversations/{id}/threads", Tags: tags,
		Summary:     "The threads started in the conversation, oldest first",
		Description: "Each a conversation of the caller's, linked back by its parent (GET /api/conversations/{id}).",
		Errors:      []int{http.StatusNotFound},
	}, signedIn, s.listThreads)
}

// markMessages sets the marks of views, messages of the conversation.
func (s *server) markMessages(ctx context.Context, orgID, conversationID string, views []Message) error {
	marks, err := s.st.ListMessageMarks(ctx, orgID, conversationID)
	if err != nil || len(marks) == 0 {
		return err
	}
	a := authFrom(ctx)
	for i := range views {
		j, ok := slices.BinarySearchFunc(marks, views[i].Seq, func(m store.MessageMark, seq int64) int { return cmp.Compare(m.Seq, seq) })
		if ok {
			views[i].MessageMarks = marksView(marks[j], a.UserID)
		}
	}
	return nil
}

// marksView is k as the API shows it to user.
func marksView(k store.MessageMark, user string) MessageMarks {
	v := MessageMarks{Pinned: !k.PinnedAt.IsZero(), Edited: !k.EditedAt.IsZero(), Deleted: !k.DeletedAt.IsZero()}
	for _, r := range k.Reactions {
		v.Reactions = append(v.Reactions, MessageReaction{Emoji: r.Emoji, Count: len(r.Actors),
			Agent: slices.Contains(r.Actors, store.ActorAgent), Mine: slices.Contains(r.Actors, user)})
	}
	if len(k.Threads) > 0 {
		v.Thread = k.Threads[0]
	}
	return v
}

type pinsOutput struct {
	Body struct {
		Messages []Message `json:"messages"`
	}
}

func (s *server) listPins(ctx context.Context, in *conversationPath) (*pinsOutput, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	pins, err := s.st.ListPins(ctx, a.OrgID, in.ID)
	if err != nil {
		return nil, err
	}
	out := &pinsOutput{}
	out.Body.Messages = []Message{}
	if len(pins) == 0 {
		return out, nil
	}
	ms, err := s.st.ListMessages(ctx, a.OrgID, in.ID, 0)
	if err != nil {
		return nil, err
	}
	for _, p := range pins {
		if i, ok := slices.BinarySearchFunc(ms, p.Seq, func(m store.Message, seq int64) int { return cmp.Compare(m.Seq, seq) }); ok {
			m := ms[i]
			out.Body.Messages = append(out.Body.Messages, Message{Seq: m.Seq, TurnID: m.TurnID, Role: m.Role, Content: m.Content, CreatedAt: m.CreatedAt})
		}
	}
	if err := s.markMessages(ctx, a.OrgID, in.ID, out.Body.Messages); err != nil {
		return nil, err
	}
	return out, nil
}

type threadsOutput struct {
	Body struct {
		Threads []Thread `json:"threads"`
	}
}

func (s *server) listThreads(ctx context.Context, in *conversationPath) (*threadsOutput, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	links, err := s.st.ListThreads(ctx, a.OrgID, in.ID)
	if err != nil {
		return nil, err
	}
	out := &threadsOutput{}
	out.Body.Threads = []Thread{}
	for _, l := range links {
		c, err := s.st.GetConversation(ctx, a.OrgID, l.ConversationID)
		if errors.Is(err, store.ErrNotFound) || err == nil && c.UserID != a.UserID {
			continue
		}
		if err != nil {
			return nil, err
		}
		out.Body.Threads = append(out.Body.Threads, Thread{ID: c.ID, Title: c.Title, MessageSeq: l.ParentSeq})
	}
	return out, nil
}

// threadParent is where the conversation was started when it is a
// thread of another of the caller's, else nil.
func (s *server) threadParent(ctx context.Context, a *auth, id string) (*ThreadParent, error) {
	l, err := s.st.GetThread(ctx, a.OrgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := s.st.GetConversation(ctx, a.OrgID, l.ParentID)
	if errors.Is(err, store.ErrNotFound) || err == nil && p.UserID != a.UserID {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &ThreadParent{ConversationID: p.ID, Title: p.Title, MessageSeq: l.ParentSeq}, nil
}
