package settings

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/turn"
)

// ModelOpener opens the model a turn runs on under one configuration in
// force (its providers and their keys). engine.ModelOpener has the same
// method, so a Runtime's Models serves the engine as is.
type ModelOpener interface {
	Open(ctx context.Context, m turn.Model) (llm.Model, error)
}

// runtimeModels are the models opened under one Runtime, by
// "provider:model": each is opened once, however many callers ask at
// once, and a failed open is retried by the next caller. A new settings
// version is a new Runtime and so starts afresh, which makes this
// per-process cache harmless with several replicas: it never outlives
// the version it was opened under.
type runtimeModels struct {
	opener ModelOpener
	// flight makes concurrent first opens of one model open it once.
	flight singleflight.Group
	mu     sync.Mutex
	opened map[string]llm.Model
}

// newRuntimeModels returns the models of a runtime opened by opener; nil
// when opener is nil (the runtime opens none).
func newRuntimeModels(opener ModelOpener) *runtimeModels {
	if opener == nil {
		return nil
	}
	return &runtimeModels{opener: opener, opened: map[string]llm.Model{}}
}

// Open implements ModelOpener: the model m names, opened once per
// runtime. The open itself is not cancelled with one caller's ctx (others
// may wait on it); a caller whose ctx ends stops waiting with its error.
func (rm *runtimeModels) Open(ctx context.Context, m turn.Model) (llm.Model, error) {
	// The capabilities are part of the key: an OpenAI-compatible or
	// Ollama model reports the capabilities it was opened with (the
	// opening agent's declaration), so agents declaring differently must
	// not share one.
	key := fmt.Sprintf("%s:%s %+v", m.Provider, m.Name, m.Caps)
	if mod, ok := rm.cached(key); ok {
		return mod, nil
	}
	ch := rm.flight.DoChan(key, func() (any, error) {
		if mod, ok := rm.cached(key); ok {
			return mod, nil // opened by a flight that ended after our check
		}
		mod, err := rm.opener.Open(context.WithoutCancel(ctx), m)
		if err != nil {
			return nil, err
		}
		rm.mu.Lock()
		rm.opened[key] = mod
		rm.mu.Unlock()
		return mod, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(llm.Model), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// cached returns the model opened under key, if any.
func (rm *runtimeModels) cached(key string) (llm.Model, bool) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	mod, ok := rm.opened[key]
	return mod, ok
}
