package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/store"
)

// Memory management: a person lists, reads, edits and deletes their own
// long-term memories; an admin also the organisation's shared ones
// (OwnerID ""). Another person's memory is as absent as a missing one.
// The tools that save memories are the agent's (builtin/memory); these
// endpoints only look after what is stored.
func (s *server) memoryRoutes() {
	tags := []string{"memories"}
	register(s, huma.Operation{
		OperationID: "list-memories", Method: http.MethodGet, Path: "/api/memories", Tags: tags,
		Summary: "The caller's memories, newest first, or the organisation's shared ones",
		Description: "scope personal (the default) lists the caller's own memories; scope shared the organisation's, " +
			"for admins only (403 otherwise). A page holds at most limit; next_cursor, when set, asks for the page " +
			"after it. With q, the memories of that scope holding any of its words instead, best first (full text, " +
			"at most 50, no cursor).",
		Errors: []int{http.StatusForbidden},
	}, signedIn, s.listMemories)
	register(s, huma.Operation{
		OperationID: "get-memory", Method: http.MethodGet, Path: "/api/memories/{id}", Tags: tags,
		Summary:     "One of the caller's memories, or (admins) one of the organisation's shared ones",
		Description: "Another person's memory is 404, as a missing one.",
		Errors:      []int{http.StatusNotFound},
	}, signedIn, s.getMemory)
	register(s, huma.Operation{
		OperationID: "update-memory", Method: http.MethodPatch, Path: "/api/memories/{id}", Tags: tags,
		Summary: "Replace a memory's text",
		// The text is stored as plain text (control characters but line
		// breaks and tabs replaced), without surrounding space.
		Description: "The text is embedded again by the organisation's embedding model and stored with the new vector, " +
			"so search finds the memory by what it now says. An organisation without an embedding model is 409 " +
			"no_embedding_model and the memory is unchanged (delete it instead, or configure a model); a model that " +
			"fails is 502 embedding_failed, also unchanged. A blank text is 400 invalid_memory.",
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusBadGateway},
	}, signedIn, s.updateMemory)
	register(s, huma.Operation{
		OperationID: "delete-memory", Method: http.MethodDelete, Path: "/api/memories/{id}", Tags: tags,
		Summary:       "Delete a memory, with its vector and its full-text entry",
		Description:   "Another person's memory is 404, as a missing one; a shared one may be deleted by admins only.",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound},
	}, signedIn, s.deleteMemory)
}

// Memory is a long-term memory as the API shows it (never its vector).
type Memory struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	Shared    bool      `json:"shared" doc:"The organisation's memory, seen by every person in it; false: the caller's own."`
	Model     string    `json:"model" doc:"The embedding model that made its vector, ref/dimension (\"local:ngram-512/512\")."`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at" doc:"When its text last changed."`
}

func memoryView(m store.Memory) Memory {
	return Memory{
		ID: m.ID, Text: m.Text, Shared: m.OwnerID == "", Model: m.Model,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

var errNoMemory = notFound("no such memory")

// Scopes of list-memories.
const (
	scopePersonal = "personal"
	scopeShared   = "shared"
)

type listMemoriesInput struct {
	Scope  string `query:"scope" enum:"personal,shared" default:"personal" doc:"personal: the caller's own; shared: the organisation's (admins)."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"50"`
	Cursor string `query:"cursor" maxLength:"400" doc:"next_cursor of the page before."`
	Q      string `query:"q" maxLength:"2000" doc:"Words to search for; blank lists everything."`
}

type memoriesOutput struct {
	Body struct {
		Memories   []Memory `json:"memories"`
		NextCursor string   `json:"next_cursor,omitempty" doc:"Set when more follow: pass it as cursor for the next page."`
	}
}

// memoryOwner is the owner whose memories scope names for a: the caller,
// or "" (the shared ones) for an admin; a member asking for shared is
// refused.
func memoryOwner(a *auth, scope string) (string, error) {
	if scope != scopeShared {
		return a.UserID, nil
	}
	if !a.admin() {
		return "", apiErr(http.StatusForbidden, "forbidden", "only an admin may manage the organisation's shared memories")
	}
	return "", nil
}

func (s *server) listMemories(ctx context.Context, in *listMemoriesInput) (*memoriesOutput, error) {
	a := authFrom(ctx)
	owner, err := memoryOwner(a, in.Scope)
	if err != nil {
		return nil, err
	}
	if q := strings.TrimSpace(in.Q); q != "" {
		return s.searchMemories(ctx, a.OrgID, owner, q, in.Limit)
	}
	p := store.MemoryPage{Limit: in.Limit}
	if in.Cursor != "" {
		c, ok := decodeCursor(in.Cursor)
		if !ok {
			return nil, apiErr(http.StatusBadRequest, "invalid_cursor", "cursor: not a next_cursor this API gave")
		}
		p.BeforeCreatedAt, p.BeforeID = c.UpdatedAt, c.ID
	}
	l, err := s.st.ListMemories(ctx, a.OrgID, owner, p)
	if err != nil {
		return nil, err
	}
	out := &memoriesOutput{}
	out.Body.Memories = make([]Memory, 0, len(l.Memories))
	for _, m := range l.Memories {
		out.Body.Memories = append(out.Body.Memories, memoryView(m))
	}
	if l.More && len(l.Memories) > 0 {
		last := l.Memories[len(l.Memories)-1]
		// A conversation's cursor carries an instant and an ID: here the
		// last memory's CreatedAt.
		out.Body.NextCursor = encodeCursor(store.ConversationCursor{UpdatedAt: last.CreatedAt, ID: last.ID})
	}
	return out, nil
}

// searchMemories is list-memories with q: the owner's own memories
// holding any of q's words (the shared ones are the shared scope's).
func (s *server) searchMemories(ctx context.Context, orgID, owner, q string, limit int) (*memoriesOutput, error) {
	ms, err := s.st.SearchMemories(ctx, store.MemorySearch{OrgID: orgID, OwnerID: owner, OwnerOnly: owner != "", Text: q, Limit: limit})
	if errors.Is(err, store.ErrMemoryInvalid) {
		return nil, apiErr(http.StatusBadRequest, "invalid_request", "q: "+strings.TrimPrefix(err.Error(), store.ErrMemoryInvalid.Error()+": "))
	}
	if err != nil {
		return nil, err
	}
	out := &memoriesOutput{}
	out.Body.Memories = make([]Memory, 0, len(ms))
	for _, m := range ms {
		out.Body.Memories = append(out.Body.Memories, memoryView(m))
	}
	return out, nil
}

type memoryPath struct {
	ID string `path:"id" maxLength:"255" doc:"The memory's id."`
}

type memoryOutput struct{ Body Memory }

// findMemory returns the memory id names that a may manage: their own,
// else, for an admin, the organisation's shared one of that id; anything
// else is errNoMemory.
func (s *server) findMemory(ctx context.Context, a *auth, id string) (store.Memory, error) {
	m, err := s.st.GetMemory(ctx, a.OrgID, a.UserID, id)
	if errors.Is(err, store.ErrNotFound) && a.admin() {
		m, err = s.st.GetMemory(ctx, a.OrgID, "", id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return store.Memory{}, errNoMemory
	}
	return m, err
}

func (s *server) getMemory(ctx context.Context, in *memoryPath) (*memoryOutput, error) {
	m, err := s.findMemory(ctx, authFrom(ctx), in.ID)
	if err != nil {
		return nil, err
	}
	return &memoryOutput{Body: memoryView(m)}, nil
}

type updateMemoryInput struct {
	ID   string `path:"id" maxLength:"255" doc:"The memory's id."`
	Body struct {
		Text string `json:"text" minLength:"1" maxLength:"2000" doc:"What is remembered, at most 2,000 characters; not blank."`
	}
}

var errNoEmbedder = apiErr(http.StatusConflict, "no_embedding_model",
	"this organisation has no embedding model, so an edited memory could not be found by meaning; the memory is unchanged (delete it, or configure an embedding model)")

func (s *server) updateMemory(ctx context.Context, in *updateMemoryInput) (*memoryOutput, error) {
	a := authFrom(ctx)
	// Space around the text is an edit box's, not the memory's.
	text := strings.TrimSpace(store.PlainText(in.Body.Text))
	if text == "" {
		return nil, apiErr(http.StatusBadRequest, "invalid_memory", "text is blank")
	}
	old, err := s.findMemory(ctx, a, in.ID)
	if err != nil {
		return nil, err
	}
	model, vec, err := s.embedMemory(ctx, a.OrgID, text)
	if err != nil {
		return nil, err
	}
	m, err := s.st.UpdateMemory(ctx, store.Memory{
		OrgID: a.OrgID, ID: old.ID, OwnerID: old.OwnerID, Text: text, Model: model, Vector: vec, UpdatedAt: s.now(),
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, errNoMemory // deleted meanwhile
	case errors.Is(err, store.ErrMemoryInvalid):
		return nil, apiErr(http.StatusBadRequest, "invalid_memory", strings.TrimPrefix(err.Error(), store.ErrMemoryInvalid.Error()+": "))
	case err != nil:
		return nil, err
	}
	return &memoryOutput{Body: memoryView(m)}, nil
}

// embedMemory embeds a memory's text with the organisation's model and
// returns the model's name (ref/dimension, as store.Memory.Model holds
// it) and the vector packed; errNoEmbedder when the organisation has no
// model, a 502 when it fails (logged).
func (s *server) embedMemory(ctx context.Context, orgID, text string) (string, embed.Packed, error) {
	if s.embeddings == nil {
		return "", nil, errNoEmbedder
	}
	e, err := s.embeddings.Embedder(ctx, orgID)
	if err != nil {
		return "", nil, err
	}
	if e == nil {
		return "", nil, errNoEmbedder
	}
	vs, err := e.Embed(ctx, []string{text}, embed.Document)
	if err == nil && len(vs) != 1 {
		err = errors.New("the model answered no vector")
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		s.internal(ctx, "update-memory: embed", err)
		return "", nil, apiErr(http.StatusBadGateway, "embedding_failed", "the embedding model failed; the memory is unchanged: try again")
	}
	m := e.Model()
	if m.Dims == 0 {
		m.Dims = len(vs[0]) // a remote model learns its dimension from its answers
	}
	return m.String(), embed.Pack(vs[0]), nil
}

func (s *server) deleteMemory(ctx context.Context, in *memoryPath) (*struct{}, error) {
	a := authFrom(ctx)
	m, err := s.findMemory(ctx, a, in.ID)
	if err != nil {
		return nil, err
	}
	if err := s.st.DeleteMemory(ctx, a.OrgID, m.OwnerID, m.ID); errors.Is(err, store.ErrNotFound) {
		return nil, errNoMemory
	} else if err != nil {
		return nil, err
	}
	return nil, nil
}
