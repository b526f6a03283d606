package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/settings"
)

// embeddings is the process's one embed.Source: each organisation's
// embedding model, the embedding_model of its configuration (the
// deployment's with its settings applied) opened under its provider keys,
// once per settings version. Everything that embeds (the memory tools,
// indexers) is handed this one value. Safe for concurrent use.
type embeddings struct {
	// orgs is set once, before the first call (the catalog that takes
	// this source is built before the settings service that builds it).
	orgs *settings.Service
	ms   models

	mu     sync.Mutex
	opened map[string]openedEmbedder // by organisation
}

// openedEmbedder is an organisation's embedder at a settings version.
type openedEmbedder struct {
	version int64
	ref     string
	e       embed.Embedder
}

var _ embed.Source = (*embeddings)(nil)

func newEmbeddings(ms models) *embeddings {
	return &embeddings{ms: ms, opened: map[string]openedEmbedder{}}
}

// Embedder implements embed.Source: nil when the organisation's
// configuration says embedding_model: off. Opening sends nothing; a
// provider that is not connected (no key) is an error.
func (s *embeddings) Embedder(ctx context.Context, orgID string) (embed.Embedder, error) {
	if s == nil || s.orgs == nil {
		return nil, errors.New("embeddings: no settings service")
	}
	v, err := s.orgs.Runtime(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return s.open(ctx, orgID, v)
}

// open returns the embedder of the organisation's runtime v, opened once
// per settings version.
func (s *embeddings) open(ctx context.Context, orgID string, v *settings.Runtime) (embed.Embedder, error) {
	cfg := v.Config()
	ref := cfg.EmbeddingRef()
	if ref == "" {
		return nil, nil
	}
	s.mu.Lock()
	o, ok := s.opened[orgID]
	s.mu.Unlock()
	if ok && o.version == v.Version() && o.ref == ref {
		return o.e, nil
	}
	e, err := s.ms.set(cfg).OpenEmbedder(ctx, ref, 0)
	var ce *providers.ConnectError
	if errors.As(err, &ce) {
		return nil, fmt.Errorf("embedding model: %s", ce.Msg)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if cur, ok := s.opened[orgID]; !ok || cur.version <= v.Version() {
		s.opened[orgID] = openedEmbedder{version: v.Version(), ref: ref, e: e}
	}
	s.mu.Unlock()
	return e, nil
}

// has reports whether the organisation, at its runtime v, has an
// embedding model it can open: what puts "embedding" among a turn's
// backends. A nil s has none.
func (s *embeddings) has(ctx context.Context, orgID string, v *settings.Runtime) bool {
	if s == nil {
		return false
	}
	e, err := s.open(ctx, orgID, v)
	return err == nil && e != nil
}
