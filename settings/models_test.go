package settings_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/turn"
)

// opens counts the models opened and records the OpenAI key each open
// was given; while release is set, each open waits for it to close.
type opens struct {
	mu      sync.Mutex
	keys    []string
	fail    error
	release chan struct{}
}

// models is settings.Config.Models over the counter.
func (o *opens) models(cfg config.Config) settings.ModelOpener {
	return openFunc(func(ctx context.Context, m turn.Model) (llm.Model, error) {
		o.mu.Lock()
		o.keys = append(o.keys, cfg.Providers["openai"].APIKey)
		release, fail := o.release, o.fail
		o.mu.Unlock()
		if release != nil {
			<-release
		}
		if fail != nil {
			return nil, fail
		}
		mod := llmtest.NewModel()
		mod.ModelRef = m.Provider + ":" + m.Name
		return mod, nil
	})
}

func (o *opens) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.keys)
}

type openFunc func(context.Context, turn.Model) (llm.Model, error)

func (f openFunc) Open(ctx context.Context, m turn.Model) (llm.Model, error) { return f(ctx, m) }

var gpt = turn.Model{Provider: "openai", Name: "gpt-4.1-mini"}

// openAll opens m through rt's models from n callers at once: every
// caller is waiting before the first open may finish. It returns what
// they got.
func openAll(t *testing.T, o *opens, rt *settings.Runtime, m turn.Model, n int) ([]llm.Model, int) {
	t.Helper()
	out := make([]llm.Model, n)
	errs := make([]error, n)
	var opened int
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		o.mu.Lock()
		o.release = release
		o.mu.Unlock()
		before := o.count()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { out[i], errs[i] = rt.Models().Open(context.Background(), m) })
		}
		synctest.Wait() // every caller is blocked: in the open, or waiting for it
		opened = o.count() - before
		close(release)
		wg.Wait()
		o.mu.Lock()
		o.release = nil
		o.mu.Unlock()
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if out[i] != out[0] {
			t.Fatalf("open %d got another model than the others", i)
		}
	}
	return out, opened
}

// TestRuntimeOpensModelsOncePerVersion: many turns opening one model of
// a runtime at once open it once and share it; asking again opens
// nothing; another model is opened on its own; a new settings version
// opens afresh, with its keys; a failed open is not kept.
func TestRuntimeOpensModelsOncePerVersion(t *testing.T) {
	const n = 16
	ctx := context.Background()
	st := newStore(t)
	o := &opens{}
	s := settings.New(settings.Config{Store: st, Keyring: keyring(t, "k1", 1), Build: (&builds{}).build, Models: o.models})
	if o.count() != 0 {
		t.Fatalf("New opened %d models, want none before a turn asks", o.count())
	}
	up := publicUpdate(0)
	up.SetKeys = map[string]string{"openai_api_key": "sk-one"}
	if _, err := s.Update(ctx, "acme", up); err != nil {
		t.Fatal(err)
	}
	first, err := s.Runtime(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	got, opened := openAll(t, o, first, gpt, n)
	if opened != 1 || o.count() != 1 {
		t.Fatalf("%d concurrent opens opened %d models (%d in all), want 1", n, opened, o.count())
	}
	if got[0].Ref() != "openai:gpt-4.1-mini" || o.keys[0] != "sk-one" {
		t.Fatalf("opened %s with key %q", got[0].Ref(), o.keys[0])
	}
	if again, err := first.Models().Open(ctx, gpt); err != nil || again != got[0] || o.count() != 1 {
		t.Fatalf("asking again: same model %v, opens %d, err %v", again == got[0], o.count(), err)
	}
	if other, err := first.Models().Open(ctx, turn.Model{Provider: "openai", Name: "gpt-5"}); err != nil || other.Ref() != "openai:gpt-5" || o.count() != 2 {
		t.Fatalf("another model: opens %d, err %v", o.count(), err)
	}
	// An agent declaring other capabilities for the same model gets a
	// model of its own: an OpenAI-compatible model reports the
	// capabilities it was opened with, so sharing would hand one agent's
	// declaration to the other.
	noTools := gpt
	noTools.Caps = turn.Capabilities{ParallelTools: true}
	if m, err := first.Models().Open(ctx, noTools); err != nil || m == got[0] || o.count() != 3 {
		t.Fatalf("other capabilities: same model %v, opens %d, err %v", m == got[0], o.count(), err)
	}
	o.mu.Lock()
	o.keys = o.keys[:2]
	o.mu.Unlock()

	up = publicUpdate(1)
	up.SetKeys = map[string]string{"openai_api_key": "sk-two"}
	if _, err := s.Update(ctx, "acme", up); err != nil {
		t.Fatal(err)
	}
	second, err := s.Runtime(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	got2, opened := openAll(t, o, second, gpt, n)
	if opened != 1 || got2[0] == got[0] || o.keys[2] != "sk-two" {
		t.Fatalf("new version: %d opens, same model as before %v, key %q", opened, got2[0] == got[0], o.keys[2])
	}

	// An organisation that never saved opens under the deployment's
	// configuration; a failure reaches the caller and is not kept.
	base, err := s.Runtime(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	o.fail = errors.New("no key for openai")
	if _, err := base.Models().Open(ctx, gpt); err == nil || err.Error() != "no key for openai" {
		t.Fatalf("failing open: %v", err)
	}
	o.fail = nil
	if mod, err := base.Models().Open(ctx, gpt); err != nil || mod == nil || o.count() != 5 || o.keys[4] != "" {
		t.Fatalf("after a failed open: opens %d, err %v", o.count(), err)
	}
}

// TestRuntimeWithoutModels: a Service built without Config.Models gives
// runtimes that open none, and a runtime names its keys without their
// values.
func TestRuntimeWithoutModels(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	s := service(st, keyring(t, "k1", 1), config.Config{}, &builds{})
	up := publicUpdate(0)
	up.SetKeys = map[string]string{"openai_api_key": "sk-one", "brave_api_key": "b"}
	if _, err := s.Update(ctx, "acme", up); err != nil {
		t.Fatal(err)
	}
	for _, org := range []string{"acme", "other"} {
		rt, err := s.Runtime(ctx, org)
		if err != nil {
			t.Fatal(err)
		}
		if rt.Models() != nil {
			t.Errorf("%s: Models() = %v, want nil", org, rt.Models())
		}
	}
	rt, _ := s.Runtime(ctx, "acme")
	if got := rt.KeyNames(); len(got) != 2 || got[0] != "brave_api_key" || got[1] != "openai_api_key" {
		t.Errorf("KeyNames = %v, want [brave_api_key openai_api_key]", got)
	}
	if base, _ := s.Runtime(ctx, "other"); base.KeyNames() == nil || len(base.KeyNames()) != 0 {
		t.Errorf("KeyNames of the deployment's runtime = %#v, want empty", base.KeyNames())
	}
}
