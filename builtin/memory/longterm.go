package memory

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

var (
	//go:embed save_memory.md
	saveDescription string
	//go:embed update_memory.md
	updateDescription string
	//go:embed forget_memory.md
	forgetDescription string
	//go:embed search_memory.md
	searchDescription string
)

// SaveInput is save_memory's arguments.
type SaveInput struct {
	Text string `json:"text" jsonschema:"the fact, in a sentence or two"`
}

// UpdateInput is update_memory's arguments.
type UpdateInput struct {
	ID   string `json:"id" jsonschema:"the memory's id (mem_…)"`
	Text string `json:"text" jsonschema:"its new text, whole"`
}

// ForgetInput is forget_memory's arguments.
type ForgetInput struct {
	ID string `json:"id" jsonschema:"the memory's id (mem_…)"`
}

// SearchInput is search_memory's arguments.
type SearchInput struct {
	Query string `json:"query" jsonschema:"what to look for"`
	Limit int    `json:"limit,omitempty" jsonschema:"results, 1–10 (default 5)"`
}

func (s *svc) saveTool() *tool.Tool {
	return tool.New(tool.Spec{
		Name: "save_memory", Family: Family, Macros: []string{"memory_tool"},
		Description: strings.TrimSpace(saveDescription), Access: tool.Write, Requires: requires,
		Limits: []tool.Limit{{Name: "text_chars", Value: store.MaxMemoryRunes}, {Name: "memories", Value: store.MaxMemoriesPerOwner}},
	}, s.save)
}

func (s *svc) updateTool() *tool.Tool {
	return tool.New(tool.Spec{
		Name: "update_memory", Family: Family, Macros: []string{"memory_update_tool"},
		Description: strings.TrimSpace(updateDescription), Access: tool.Write, Requires: requires,
		Limits: []tool.Limit{{Name: "text_chars", Value: store.MaxMemoryRunes}},
	}, s.update)
}

func (s *svc) forgetTool() *tool.Tool {
	return tool.New(tool.Spec{
		Name: "forget_memory", Family: Family,
		Description: strings.TrimSpace(forgetDescription), Access: tool.Write, Requires: requires,
	}, s.forget)
}

func (s *svc) searchTool() *tool.Tool {
	return tool.New(tool.Spec{
		Name: "search_memory", Family: Family,
		Description: strings.TrimSpace(searchDescription), Requires: requires,
		Limits: []tool.Limit{{Name: "results_default", Value: DefaultResults}, {Name: "results_max", Value: MaxResults}},
		Tune: func(sc *jsonschema.Schema) {
			lo, hi := 1.0, float64(MaxResults)
			sc.Properties["limit"].Minimum, sc.Properties["limit"].Maximum = &lo, &hi
		},
	}, s.search)
}

// save embeds the text and stores it as the turn's owner's memory, unless
// the owner already sees one like it.
func (s *svc) save(ctx context.Context, sc tool.Scope, in SaveInput) (string, error) {
	if err := needPerson(sc); err != nil {
		return "", err
	}
	text, err := checkText(in.Text)
	if err != nil {
		return "", err
	}
	if s.Memories == nil {
		return "", tool.Infra(fmt.Errorf("save_memory: %w", store.ErrNoStore))
	}
	e, err := s.embedder(ctx, sc.OrgID)
	if err != nil {
		return "", err
	}
	vec, model, err := embedOne(ctx, e, text, embed.Document)
	if err != nil {
		return "", err
	}
	own := owner(sc)
	dup, err := s.duplicate(ctx, sc.OrgID, own, text, vec, model)
	if err != nil {
		return "", err
	}
	switch {
	case dup != nil && dup.OwnerID == "" && !sc.SharedMemory:
		// update_memory cannot reach a shared memory here: nothing to do.
		return "", fmt.Errorf("not saved: the organisation's shared memory %s already says this (%q); nothing needs saving", dup.ID, clip(dup.Text, 120))
	case dup != nil:
		return "", fmt.Errorf("not saved: %s memory %s already says this (%q); call update_memory with that id to change it", kind(dup.OwnerID), dup.ID, clip(dup.Text, 120))
	}
	m := store.Memory{OrgID: sc.OrgID, ID: s.NewID("mem_"), OwnerID: own, Text: text,
		CreatedAt: s.Now(), Model: model, Vector: embed.Pack(vec)}
	if _, err := s.Memories.PutMemory(ctx, m, 0); err != nil {
		return "", storeError("save_memory", err)
	}
	return fmt.Sprintf("Saved %s memory %s.", kind(own), m.ID), nil
}

// duplicate returns a memory in the scope a save goes to whose text is
// the same once normalised, or whose vector is within DuplicateCosine of
// vec; nil when there is none. A personal save is checked against the
// organisation's shared memories too (the person sees them already).
func (s *svc) duplicate(ctx context.Context, orgID, ownerID, text string, vec embed.Vector, model string) (*store.Memory, error) {
	hits, err := s.Memories.SearchMemories(ctx, store.MemorySearch{OrgID: orgID, OwnerID: ownerID, Text: text, Limit: candidates})
	if err != nil {
		return nil, storeError("save_memory", err)
	}
	want := normalised(text)
	for _, h := range hits {
		if normalised(h.Text) == want {
			return &h, nil
		}
	}
	cands, err := s.Memories.MemoryVectors(ctx, orgID, ownerID, model)
	if err != nil {
		return nil, storeError("save_memory", err)
	}
	near := retrieve.Nearest(vec, cands, 1)
	if len(near) == 0 || near[0].Score < DuplicateCosine {
		return nil, nil
	}
	m, err := s.get(ctx, orgID, ownerID, near[0].ID, true)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // forgotten meanwhile
	}
	return &m, err
}

// get returns the memory id that ownerID reaches: theirs, or (with
// shared) the organisation's shared one.
func (s *svc) get(ctx context.Context, orgID, ownerID, id string, shared bool) (store.Memory, error) {
	m, err := s.Memories.GetMemory(ctx, orgID, ownerID, id)
	if errors.Is(err, store.ErrNotFound) && shared && ownerID != "" {
		m, err = s.Memories.GetMemory(ctx, orgID, "", id)
	}
	return m, err
}

// update replaces the text (and vector) of a memory the turn reaches.
func (s *svc) update(ctx context.Context, sc tool.Scope, in UpdateInput) (string, error) {
	if err := needPerson(sc); err != nil {
		return "", err
	}
	text, err := checkText(in.Text)
	if err != nil {
		return "", err
	}
	if s.Memories == nil {
		return "", tool.Infra(fmt.Errorf("update_memory: %w", store.ErrNoStore))
	}
	m, err := s.get(ctx, sc.OrgID, sc.UserID, in.ID, sc.SharedMemory)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", notFound(in.ID)
	case err != nil:
		return "", storeError("update_memory", err)
	}
	e, err := s.embedder(ctx, sc.OrgID)
	if err != nil {
		return "", err
	}
	vec, model, err := embedOne(ctx, e, text, embed.Document)
	if err != nil {
		return "", err
	}
	m.Text, m.Model, m.Vector, m.UpdatedAt = text, model, embed.Pack(vec), s.Now()
	if _, err := s.Memories.UpdateMemory(ctx, m); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return "", notFound(in.ID)
		}
		return "", storeError("update_memory", err)
	}
	return fmt.Sprintf("Updated %s memory %s.", kind(m.OwnerID), m.ID), nil
}

// forget deletes a memory the turn reaches.
func (s *svc) forget(ctx context.Context, sc tool.Scope, in ForgetInput) (string, error) {
	if err := needPerson(sc); err != nil {
		return "", err
	}
	if s.Memories == nil {
		return "", tool.Infra(fmt.Errorf("forget_memory: %w", store.ErrNoStore))
	}
	err := s.Memories.DeleteMemory(ctx, sc.OrgID, sc.UserID, in.ID)
	if errors.Is(err, store.ErrNotFound) && sc.SharedMemory {
		err = s.Memories.DeleteMemory(ctx, sc.OrgID, "", in.ID)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", notFound(in.ID)
	case err != nil:
		return "", storeError("forget_memory", err)
	}
	return fmt.Sprintf("Forgot memory %s.", in.ID), nil
}

// notFound is the one answer for a memory out of reach or absent.
func notFound(id string) error {
	return fmt.Errorf("no memory %q that you can change: search_memory gives the ids", clip(id, 80))
}

// search fuses a full-text and a vector search of the memories the
// caller sees (theirs and the organisation's shared ones).
func (s *svc) search(ctx context.Context, sc tool.Scope, in SearchInput) (string, error) {
	if err := needPerson(sc); err != nil {
		return "", err
	}
	q := strings.TrimSpace(in.Query)
	limit := in.Limit
	switch {
	case q == "":
		return "", errors.New("query is empty: say what to look for")
	case len([]rune(q)) > store.MaxMemoryQueryRunes:
		return "", fmt.Errorf("query is %d characters; the limit is %d", len([]rune(q)), store.MaxMemoryQueryRunes)
	case limit <= 0:
		limit = DefaultResults
	case limit > MaxResults:
		limit = MaxResults
	}
	if s.Memories == nil {
		return "", tool.Infra(fmt.Errorf("search_memory: %w", store.ErrNoStore))
	}
	e, err := s.embedder(ctx, sc.OrgID)
	if err != nil {
		return "", err
	}
	vec, model, err := embedOne(ctx, e, q, embed.Query)
	if err != nil {
		return "", err
	}
	found, err := s.rank(ctx, sc, q, vec, model, limit)
	if err != nil {
		return "", err
	}
	if len(found) == 0 {
		return "No memory matches.", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d memories, best first:", len(found))
	for _, m := range found {
		fmt.Fprintf(&b, "\n- %s (%s, %s): %s", m.ID, kind(m.OwnerID), m.UpdatedAt.Format("2006-01-02"), oneLine(m.Text))
	}
	return b.String(), nil
}

// rank returns at most limit memories the caller sees, by reciprocal
// rank fusion of full-text rank and vector similarity.
func (s *svc) rank(ctx context.Context, sc tool.Scope, q string, vec embed.Vector, model string, limit int) ([]store.Memory, error) {
	text, err := s.Memories.SearchMemories(ctx, store.MemorySearch{OrgID: sc.OrgID, OwnerID: sc.UserID, Text: q, Limit: candidates})
	if err != nil {
		return nil, storeError("search_memory", err)
	}
	cands, err := s.Memories.MemoryVectors(ctx, sc.OrgID, sc.UserID, model)
	if err != nil {
		return nil, storeError("search_memory", err)
	}
	byID := make(map[string]store.Memory, len(text))
	textIDs := make([]string, len(text))
	for i, m := range text {
		byID[m.ID], textIDs[i] = m, m.ID
	}
	var vecIDs []string
	for _, h := range retrieve.Nearest(vec, cands, candidates) {
		if h.Score >= MinCosine {
			vecIDs = append(vecIDs, h.ID)
		}
	}
	var out []store.Memory
	// The vector ranking goes first so that it wins ties: the order
	// docs/retrieval.md's labelled set measured best.
	for _, h := range retrieve.Fuse(limit, vecIDs, textIDs) {
		m, ok := byID[h.ID]
		if !ok {
			if m, err = s.get(ctx, sc.OrgID, sc.UserID, h.ID, true); errors.Is(err, store.ErrNotFound) {
				continue // forgotten meanwhile
			} else if err != nil {
				return nil, storeError("search_memory", err)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// MinCosine is the least similarity at which a memory found by vector
// alone is a match: below it the nearest memories share no more than
// chance features with the query (unrelated sentences score 0.03–0.11 on
// the local embedder; TestDuplicateThreshold shows them).
const MinCosine = 0.15

// clip shortens s to n characters, with an ellipsis.
func clip(s string, n int) string {
	r := []rune(oneLine(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}

// oneLine collapses whitespace, so a memory is one line of a list.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// needPerson refuses a call with no person in its scope: an empty UserID
// would otherwise read as the organisation's shared owner (""). Every
// surface sets one today; this keeps it so if one does not.
func needPerson(sc tool.Scope) error {
	if sc.UserID == "" {
		return tool.Infra(errors.New("memory: a call without a person"))
	}
	return nil
}
