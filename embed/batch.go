package embed

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quiverhq/quiver/llm"
)

// Batching defaults.
const (
	// DefaultBatch is how many texts Batched sends per request.
	DefaultBatch = 96
	// DefaultAttempts is how many times Batched tries one request.
	DefaultAttempts = 4
	// maxWait bounds one wait between attempts, whatever the provider
	// asks in Retry-After.
	maxWait = 30 * time.Second
)

// BatchConfig configures Batched.
type BatchConfig struct {
	// Size is the most texts per request; 0 means DefaultBatch.
	Size int
	// Attempts is how many times one request is tried when the
	// provider's error is retryable (llm.Error.Retryable); 0 means
	// DefaultAttempts.
	Attempts int
	// Sleep waits between attempts, returning early with ctx's error
	// when ctx ends; nil means a timer. Tests give a fake.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Batched wraps e so that Embed takes any number of texts up to MaxTexts:
// they go in requests of at most cfg.Size, one after another; a request
// that fails with a retryable provider error is tried again, after the
// provider's Retry-After or a backoff of 0.5 s, 1 s, 2 s, ... (at most
// 30 s). Every answer must keep the dimension of the first, and the
// wrapper's Model reports it once known.
func Batched(e Embedder, cfg BatchConfig) Embedder {
	if cfg.Size <= 0 {
		cfg.Size = DefaultBatch
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = DefaultAttempts
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	return &batched{inner: e, cfg: cfg, dims: e.Model().Dims}
}

type batched struct {
	inner Embedder
	cfg   BatchConfig
	mu    sync.Mutex
	dims  int // 0 until known
}

func (b *batched) Model() Model {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Model{Ref: b.inner.Model().Ref, Dims: b.dims}
}

func (b *batched) Embed(ctx context.Context, texts []string, kind Kind) ([]Vector, error) {
	if err := Check(texts); err != nil {
		return nil, err
	}
	out := make([]Vector, 0, len(texts))
	for start := 0; start < len(texts); start += b.cfg.Size {
		part := texts[start:min(start+b.cfg.Size, len(texts))]
		vs, err := b.attempt(ctx, part, kind)
		if err != nil {
			return nil, err
		}
		if err := b.keepDims(vs); err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// attempt sends one request, retrying what may succeed on retry.
func (b *batched) attempt(ctx context.Context, texts []string, kind Kind) ([]Vector, error) {
	wait := 500 * time.Millisecond
	for try := 1; ; try++ {
		vs, err := b.inner.Embed(ctx, texts, kind)
		if err == nil {
			if len(vs) != len(texts) {
				return nil, fmt.Errorf("embed: %s answered %d vectors for %d texts", b.inner.Model().Ref, len(vs), len(texts))
			}
			return vs, nil
		}
		le, ok := llm.AsError(err)
		if !ok || !le.Retryable() || try >= b.cfg.Attempts || ctx.Err() != nil {
			return nil, err
		}
		d := wait
		if le.RetryAfter > 0 {
			d = le.RetryAfter
		}
		if err := b.cfg.Sleep(ctx, min(d, maxWait)); err != nil {
			return nil, err
		}
		wait *= 2
	}
}

// keepDims checks vs against the dimension known so far, learning it
// from the first answer.
func (b *batched) keepDims(vs []Vector) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, v := range vs {
		if b.dims == 0 {
			b.dims = len(v)
		}
		if len(v) != b.dims {
			return fmt.Errorf("embed: %s answered a vector of %d dimensions after %d", b.inner.Model().Ref, len(v), b.dims)
		}
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
