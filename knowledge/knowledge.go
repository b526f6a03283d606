// Package knowledge indexes the documents attached to an agent and
// searches them: a file is extracted (document.Extract), chunked
// (document.Chunks), embedded with the organisation's model in batches
// and stored (store.Knowledge), its progress recorded after every batch;
// a search fuses full-text and vector rankings (retrieve.Fuse). A file
// that fails is kept as failed with its reason and never affects the
// agent's other documents.
package knowledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/document"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// Bounds of a search.
const (
	// DefaultResults is how many chunks a search returns by default.
	DefaultResults = 10
	// MaxResults is the most a search returns.
	MaxResults = 20
	// depth is how many of each ranking a search fuses.
	depth = 50
)

// Index stores and searches knowledge. Its zero value is not usable: set
// Store. Safe for concurrent use.
type Index struct {
	// Store holds the documents and chunks; required.
	Store store.Knowledge
	// Embedders gives an organisation its embedding model; nil, or a
	// Source answering none, keeps chunks findable by full text only.
	Embedders embed.Source
	// Extractor reads files; its zero value reads text and DOCX.
	Extractor document.Extractor
	// Now is the clock; nil means clock.Now.
	Now func() time.Time
	// NewID returns a fresh ID with the prefix; nil means ids.Random.
	NewID func(prefix string) string
	// Batch is how many chunks are embedded and stored at a time; 0
	// means 64 (at most store.MaxKnowledgeBatch).
	Batch int
}

// File is one file to add.
type File struct {
	Name      string
	MediaType string
	Data      []byte
}

// Progress is told the document after each stored batch.
type Progress func(store.KnowledgeDocument)

func (x *Index) now() time.Time {
	if x.Now == nil {
		return clock.Now().UTC()
	}
	return x.Now().UTC()
}

func (x *Index) newID() string {
	if x.NewID == nil {
		return ids.Random{}.New("kdoc")
	}
	return x.NewID("kdoc")
}

func (x *Index) batch() int {
	if x.Batch <= 0 {
		return 64
	}
	return min(x.Batch, store.MaxKnowledgeBatch)
}

// Add stores f as a document of the agent and indexes it. A file the
// store refuses outright (too large, a bad name, the agent at its cap)
// is an error and nothing is stored. Once stored, a file that cannot be
// read or embedded ends failed with the reason (the returned document
// says so, the error is nil): the failure is the file's, not the call's.
// progress, when not nil, sees each batch.
func (x *Index) Add(ctx context.Context, orgID, agent string, f File, progress Progress) (store.KnowledgeDocument, error) {
	if len(f.Data) > store.MaxKnowledgeFileBytes {
		return store.KnowledgeDocument{}, fmt.Errorf("knowledge: add %s: it is %d bytes; the limit is %d (25 MiB): %w",
			f.Name, len(f.Data), store.MaxKnowledgeFileBytes, store.ErrKnowledgeQuota)
	}
	if f.MediaType == "" {
		f.MediaType = "application/octet-stream"
	}
	d, err := x.Store.PutKnowledgeDocument(ctx, store.KnowledgeDocument{OrgID: orgID, Agent: agent, ID: x.newID(),
		Name: f.Name, MediaType: f.MediaType, Size: int64(len(f.Data)), CreatedAt: x.now()})
	if err != nil {
		return store.KnowledgeDocument{}, fmt.Errorf("knowledge: add %s: %w", f.Name, err)
	}
	if progress != nil {
		progress(d)
	}
	reason := x.index(ctx, d, f, progress)
	if reason != nil && ctx.Err() != nil {
		// Record the failure even though the caller gave up.
		ctx = context.WithoutCancel(ctx)
	}
	msg := ""
	if reason != nil {
		msg = reason.Error()
	}
	done, err := x.Store.FinishKnowledgeDocument(ctx, orgID, agent, d.ID, msg, x.now())
	if err != nil {
		return d, fmt.Errorf("knowledge: add %s: %w", f.Name, err)
	}
	if progress != nil {
		progress(done)
	}
	return done, nil
}

// index extracts, chunks, embeds and stores d's text; the error is the
// reason the document failed.
func (x *Index) index(ctx context.Context, d store.KnowledgeDocument, f File, progress Progress) error {
	doc, err := x.Extractor.Extract(ctx, f.Name, f.MediaType, f.Data)
	if err != nil {
		return err
	}
	chunks := document.Chunks(doc.Text)
	if len(chunks) == 0 {
		return fmt.Errorf("%s holds no text", f.Name)
	}
	if len(chunks) > store.MaxKnowledgeChunks {
		return fmt.Errorf("%s makes %d chunks; the limit is %d", f.Name, len(chunks), store.MaxKnowledgeChunks)
	}
	e, err := x.embedder(ctx, d.OrgID)
	if err != nil {
		return err
	}
	for start := 0; start < len(chunks); start += x.batch() {
		part := chunks[start:min(start+x.batch(), len(chunks))]
		stored, err := x.embedChunks(ctx, e, part)
		if err != nil {
			return err
		}
		if d, err = x.Store.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, len(chunks), stored, x.now()); err != nil {
			return err
		}
		if progress != nil {
			progress(d)
		}
	}
	return nil
}

// embedder returns the organisation's embedder, nil for none.
func (x *Index) embedder(ctx context.Context, orgID string) (embed.Embedder, error) {
	if x.Embedders == nil {
		return nil, nil
	}
	e, err := x.Embedders.Embedder(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("the embedding model: %w", err)
	}
	return e, nil
}

// embedChunks turns chunks into stored chunks, with vectors when e is
// set.
func (x *Index) embedChunks(ctx context.Context, e embed.Embedder, chunks []document.Chunk) ([]store.KnowledgeChunk, error) {
	out := make([]store.KnowledgeChunk, len(chunks))
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		out[i] = store.KnowledgeChunk{Seq: c.Index, Text: c.Text}
		texts[i] = c.Text
	}
	if e == nil {
		return out, nil
	}
	vs, err := e.Embed(ctx, texts, embed.Document)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	model := e.Model().String()
	for i, v := range vs {
		out[i].Model, out[i].Vector = model, embed.Pack(v)
	}
	return out, nil
}

// Search returns up to limit (DefaultResults for 0, at most MaxResults)
// chunks of the agent's ready documents for query: the full-text and
// vector rankings fused, each chunk with its document's name. Without an
// embedding model it ranks by full text alone. Only vectors of the
// organisation's current model are compared.
func (x *Index) Search(ctx context.Context, orgID, agent, query string, limit int) ([]store.KnowledgeHit, error) {
	if limit <= 0 {
		limit = DefaultResults
	}
	limit = min(limit, MaxResults)
	text, err := x.Store.SearchKnowledge(ctx, store.KnowledgeSearch{OrgID: orgID, Agent: agent, Text: query, Limit: depth})
	if err != nil {
		return nil, fmt.Errorf("knowledge: search: %w", err)
	}
	rankings := [][]string{chunkIDs(text)}
	e, err := x.embedder(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("knowledge: search: %w", err)
	}
	if e != nil && query != "" {
		near, err := x.nearest(ctx, e, orgID, agent, query)
		if err != nil {
			return nil, fmt.Errorf("knowledge: search: %w", err)
		}
		rankings = append(rankings, near)
	}
	fused := retrieve.Fuse(limit, rankings...)
	want := make([]string, len(fused))
	for i, h := range fused {
		want[i] = h.ID
	}
	if len(want) == 0 {
		return nil, nil
	}
	hits, err := x.Store.KnowledgeChunks(ctx, orgID, agent, want)
	if err != nil {
		return nil, fmt.Errorf("knowledge: search: %w", err)
	}
	return hits, nil
}

// nearest ranks the agent's chunks of e's model by their vectors'
// nearness to query's.
func (x *Index) nearest(ctx context.Context, e embed.Embedder, orgID, agent, query string) ([]string, error) {
	if err := embed.Check([]string{query}); err != nil {
		return nil, err
	}
	q, err := e.Embed(ctx, []string{query}, embed.Query)
	if err != nil {
		return nil, fmt.Errorf("embedding the query: %w", err)
	}
	cs, err := x.Store.KnowledgeVectors(ctx, orgID, agent, e.Model().String())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range retrieve.Nearest(q[0], cs, depth) {
		out = append(out, h.ID)
	}
	return out, nil
}

func chunkIDs(hs []store.KnowledgeHit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID()
	}
	return out
}

// Reindex embeds again, with the organisation's current model, every
// chunk of the agent's ready documents whose vector another model made
// (or none did), batch by batch, and returns how many it changed. Without
// an embedding model there is nothing to do: an error says so.
func (x *Index) Reindex(ctx context.Context, orgID, agent string) (int64, error) {
	e, err := x.embedder(ctx, orgID)
	if err != nil {
		return 0, fmt.Errorf("knowledge: reindex: %w", err)
	}
	if e == nil {
		return 0, errors.New("knowledge: reindex: no embedding model is configured")
	}
	model := e.Model().String()
	var total int64
	for {
		stale, err := x.Store.StaleKnowledgeChunks(ctx, orgID, agent, model, x.batch())
		if err != nil {
			return total, fmt.Errorf("knowledge: reindex: %w", err)
		}
		if len(stale) == 0 {
			return total, nil
		}
		texts := make([]string, len(stale))
		for i, h := range stale {
			texts[i] = h.Text
		}
		vs, err := e.Embed(ctx, texts, embed.Document)
		if err != nil {
			return total, fmt.Errorf("knowledge: reindex: embedding: %w", err)
		}
		// A model whose dimension was unknown learns it from its first
		// answer: take its name after embedding.
		model = e.Model().String()
		kv := make([]store.KnowledgeVector, len(stale))
		for i, h := range stale {
			kv[i] = store.KnowledgeVector{DocumentID: h.DocumentID, Seq: h.Seq, Model: model, Vector: embed.Pack(vs[i])}
		}
		n, err := x.Store.SetKnowledgeVectors(ctx, orgID, agent, kv)
		if err != nil {
			return total, fmt.Errorf("knowledge: reindex: %w", err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

// HasKnowledge reports whether the agent has a ready document: the
// engine's KnowledgeSource.
func (x *Index) HasKnowledge(ctx context.Context, orgID, agent string) (bool, error) {
	return x.Store.HasKnowledge(ctx, orgID, agent)
}
