// Package memory provides the long-term memory tools (save_memory,
// update_memory, forget_memory, search_memory) over store.Memories and
// an organisation's embedding model, and update_short_term_memory, the
// working memory of the turn's channel or conversation (store.ShortTerms).
//
// Who a memory belongs to comes from the turn alone: a person's own
// memories by default, the organisation's shared ones when the agent's
// shared_memory switch is on (turn.Scope.SharedMemory). Searches see the
// person's memories and the organisation's shared ones; updates and
// deletes reach the person's own, and the shared ones only under
// shared_memory. A memory out of reach is "not found".
package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Family is the long-term memory tools' family; Switch the switch that
// must be on for them (self_teaching, the seed's name for the family,
// counts too), and EmbeddingBackend the backend they need.
const (
	Family           = "memory"
	Switch           = "memory"
	SeedSwitch       = "self_teaching"
	EmbeddingBackend = "embedding"
)

// Limits of search_memory.
const (
	// DefaultResults is how many memories a search returns unless asked
	// (document search returns 10: memories are short facts, and a few
	// are what a turn needs).
	DefaultResults = 5
	// MaxResults is the most a search returns, whatever is asked.
	MaxResults = 10
	// candidates is how many each ranking (full text, vectors) brings to
	// the fusion.
	candidates = 20
)

// DuplicateCosine is the cosine at or above which a new memory counts
// as one already saved. On the local embedder the same fact reworded
// with the same words (a plural, "named" for "called", "to" for "over",
// its words reordered) scores 0.8 or more against it, while another fact
// in the same sentence frame ("the user's son is called Minh" against
// "the user's daughter is called Linh") scores 0.66 and unrelated facts
// under 0.5 (TestDuplicateThreshold measures these): 0.75 catches the
// first and keeps the others. A paraphrase in other words (0.55) is not
// caught on the local embedder; a real model scores it higher.
const DuplicateCosine = 0.75

// Config builds the memory tools.
type Config struct {
	// Memories stores long-term memories; nil keeps the tools, whose
	// calls then fail with store.ErrNoStore.
	Memories store.Memories
	// ShortTerms stores short-term memories; nil as Memories.
	ShortTerms store.ShortTerms
	// Embeddings gives an organisation its embedding model; nil (or a
	// Source answering none) makes the long-term tools' calls fail with a
	// clear error (the turn's "embedding" backend keeps them out of turns
	// without a model).
	Embeddings embed.Source
	// Now is the clock; nil means clock.Now.
	Now func() time.Time
	// NewID returns a fresh id with the prefix; nil means ids.Random.
	NewID func(prefix string) string
}

// svc is Config with its defaults filled in.
type svc struct {
	Config
}

func newSvc(c Config) *svc {
	if c.Now == nil {
		c.Now = clock.Now
	}
	if c.NewID == nil {
		c.NewID = ids.Random{}.New
	}
	return &svc{Config: c}
}

// Tools returns save_memory, update_memory, forget_memory, search_memory
// and update_short_term_memory, in that order.
func Tools(c Config) []*tool.Tool {
	s := newSvc(c)
	return []*tool.Tool{s.saveTool(), s.updateTool(), s.forgetTool(), s.searchTool(), s.shortTermTool()}
}

// switchOn reports whether the memory switch (or its seed name) is on.
func switchOn(sel turn.Selection) bool { return sel.Switch(Switch) || sel.Switch(SeedSwitch) }

// requires is the long-term tools' condition: the memory switch on and
// an embedding model configured, each failure named.
func requires(sel turn.Selection) string {
	switch {
	case !switchOn(sel):
		return "memory switch off"
	case !sel.HasBackend(EmbeddingBackend):
		return "no embedding model configured (embedding_model)"
	}
	return ""
}

// owner is whose memory a save goes to: the person's, or the
// organisation's shared ("") under shared_memory.
func owner(s tool.Scope) string {
	if s.SharedMemory {
		return ""
	}
	return s.UserID
}

// kind names an owner for the model.
func kind(ownerID string) string {
	if ownerID == "" {
		return "shared"
	}
	return "personal"
}

// embedder is the organisation's embedding model, or an error for the
// model when it has none.
func (s *svc) embedder(ctx context.Context, orgID string) (embed.Embedder, error) {
	if s.Embeddings == nil {
		return nil, errors.New("no embedding model is configured, so memory is unavailable")
	}
	e, err := s.Embeddings.Embedder(ctx, orgID)
	switch {
	case err != nil:
		return nil, tool.Infra(fmt.Errorf("embedding model: %w", err))
	case e == nil:
		return nil, errors.New("no embedding model is configured, so memory is unavailable")
	}
	return e, nil
}

// embedOne embeds text and returns its packed vector and the model
// string memories record.
func embedOne(ctx context.Context, e embed.Embedder, text string, k embed.Kind) (embed.Vector, string, error) {
	vs, err := e.Embed(ctx, []string{text}, k)
	if err != nil {
		return nil, "", tool.Infra(fmt.Errorf("embed: %w", err))
	}
	if len(vs) != 1 {
		return nil, "", tool.Infra(fmt.Errorf("embed: %d vectors for one text", len(vs)))
	}
	m := e.Model()
	if m.Dims == 0 {
		m.Dims = len(vs[0])
	}
	return vs[0], m.String(), nil
}

// storeError is what the model is told of a store error: quota and
// validity in one line of its own, anything else an infrastructure
// error.
func storeError(op string, err error) error {
	switch {
	case errors.Is(err, store.ErrMemoryQuota):
		return fmt.Errorf("memory is full (%d memories is the limit): forget or update old memories first", store.MaxMemoriesPerOwner)
	case errors.Is(err, store.ErrMemoryInvalid), errors.Is(err, store.ErrShortTermInvalid):
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return fmt.Errorf("%s refused: %s", op, msg)
	}
	return tool.Infra(fmt.Errorf("%s: %w", op, err))
}

// checkText validates a memory's text before anything is embedded or
// written.
func checkText(text string) (string, error) {
	text = strings.TrimSpace(text)
	switch n := len([]rune(text)); {
	case text == "":
		return "", errors.New("text is empty: write the fact to remember")
	case n > store.MaxMemoryRunes:
		return "", fmt.Errorf("text is %d characters; a memory holds at most %d: keep one short fact per memory", n, store.MaxMemoryRunes)
	}
	return text, nil
}

// normalised is text as the duplicate rule compares it: folded (case,
// width, NFKC), whitespace collapsed, trailing punctuation dropped.
func normalised(text string) string {
	t := strings.Join(strings.Fields(store.FoldText(text)), " ")
	return strings.TrimRight(t, ".!?;,。！？ ")
}
