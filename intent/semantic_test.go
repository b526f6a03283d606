package intent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/intent"
)

func builtinSemantic(t testing.TB) *intent.Semantic {
	t.Helper()
	xs, err := intent.BuiltinExemplars()
	if err != nil {
		t.Fatal(err)
	}
	s, err := intent.NewSemantic(xs, intent.SemanticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeEmbedder embeds a text as the unit vector of the first of its
// axes' words it holds ("axis 0" otherwise), counting its calls; err,
// when set, is every call's answer.
type fakeEmbedder struct {
	ref  string
	axes []string
	err  error

	mu      sync.Mutex
	calls   int
	texts   int
	longest int
}

func (f *fakeEmbedder) Model() embed.Model { return embed.Model{Ref: f.ref, Dims: len(f.axes) + 1} }

func (f *fakeEmbedder) Embed(ctx context.Context, texts []string, _ embed.Kind) ([]embed.Vector, error) {
	f.mu.Lock()
	f.calls++
	f.texts += len(texts)
	for _, t := range texts {
		f.longest = max(f.longest, len(t))
	}
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]embed.Vector, len(texts))
	for i, text := range texts {
		v := make(embed.Vector, len(f.axes)+1)
		v[0] = 1
		for j, w := range f.axes {
			if strings.Contains(strings.ToLower(text), w) {
				v[0], v[j+1] = 0.3, 0.95
				break
			}
		}
		out[i], _ = embed.Unit(v)
	}
	return out, nil
}

func (f *fakeEmbedder) count() (calls, texts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.texts
}

// fakeExemplars: two families with one word each, and chat.
var fakeExemplars = []intent.Exemplar{
	{Family: intent.Search, Text: "look up the weather"},
	{Family: intent.Image, Text: "a drawing of a fox"},
	{Text: "hello there"}, {Text: "how are you"}, {Text: "nice day"},
}

func TestSemanticOpensTheNearestFamily(t *testing.T) {
	f := &fakeEmbedder{ref: "fake:a", axes: []string{"weather", "drawing"}}
	s, err := intent.NewSemantic(fakeExemplars, intent.SemanticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ms, err := s.Match(ctx, f, "what's the weather tomorrow", intent.Result{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Target != intent.Search || ms[0].Source != intent.SourceSemantic || ms[0].Trigger != "similarity 1.00" {
		t.Fatalf("matches = %+v, want search by similarity 1.00", ms)
	}
	if ms, _ := s.Match(ctx, f, "hello, how are you", intent.Result{}); len(ms) != 0 {
		t.Errorf("chat opened %+v", ms)
	}
	// A family already open is not matched again; one the packs found
	// stays theirs.
	res := intent.Result{Targets: []string{intent.Search}, Matches: []intent.Match{{Target: intent.Search, Trigger: "weather", Source: intent.SourcePack}}}
	if ms, _ := s.Match(ctx, f, "weather", res); len(ms) != 0 {
		t.Errorf("an open family matched again: %+v", ms)
	}
	// A capability question opens neither search nor memory.
	res = intent.Result{Targets: []string{intent.Capabilities}, Matches: []intent.Match{{Target: intent.Capabilities, Trigger: "can you", Source: intent.SourcePack}}}
	if ms, _ := s.Match(ctx, f, "can you check the weather", res); len(ms) != 0 {
		t.Errorf("a capability question opened %+v", ms)
	}
	// The exemplars are embedded once for the model: one call for them,
	// then one per message.
	if calls, _ := f.count(); calls != 5 {
		t.Errorf("%d Embed calls for 4 messages, want 5", calls)
	}
	got := intent.Result{}.With(ms...).With(intent.Match{Target: intent.Image, Trigger: "x", Source: intent.SourceSemantic})
	if len(got.Targets) != 2 || got.Targets[0] != intent.Search || got.Targets[1] != intent.Image || len(got.With(ms...).Matches) != 2 {
		t.Errorf("With: %+v", got)
	}
}

func TestSemanticErrorsSkipTheStage(t *testing.T) {
	s, err := intent.NewSemantic(fakeExemplars, intent.SemanticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("provider down")
	f := &fakeEmbedder{ref: "fake:down", axes: []string{"weather"}, err: boom}
	ms, err := s.Match(context.Background(), f, "weather please", intent.Result{})
	if !errors.Is(err, boom) || ms != nil {
		t.Fatalf("Match = %v, %v; want the provider's error", ms, err)
	}
	// The failure is kept: the next message does not embed the
	// exemplars again at once.
	if _, err := s.Match(context.Background(), f, "weather please", intent.Result{}); !errors.Is(err, boom) {
		t.Fatalf("second Match: %v", err)
	}
	if calls, _ := f.count(); calls != 1 {
		t.Errorf("%d Embed calls after a failure, want 1", calls)
	}
	// A cancelled turn stops waiting.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Match(ctx, &fakeEmbedder{ref: "fake:slow", axes: []string{"weather"}}, "weather", intent.Result{}); err == nil {
		t.Error("a cancelled context: no error")
	}
}

// slowEmbedder answers the exemplars at once and a message only when
// its context ends.
type slowEmbedder struct{ fakeEmbedder }

func (s *slowEmbedder) Embed(ctx context.Context, texts []string, kind embed.Kind) ([]embed.Vector, error) {
	if len(texts) == 1 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.fakeEmbedder.Embed(ctx, texts, kind)
}

// TestSemanticTimeout: a model that does not answer a message within
// the stage's timeout skips the stage with the deadline's error.
func TestSemanticTimeout(t *testing.T) {
	s, err := intent.NewSemantic(fakeExemplars, intent.SemanticOptions{Timeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowEmbedder{fakeEmbedder{ref: "fake:slow", axes: []string{"weather"}}}
	ms, err := s.Match(context.Background(), slow, "weather", intent.Result{})
	if !errors.Is(err, context.DeadlineExceeded) || ms != nil {
		t.Errorf("Match = %v, %v; want the deadline's error", ms, err)
	}
}

func TestSemanticKeepsAFewModels(t *testing.T) {
	s, err := intent.NewSemantic(fakeExemplars, intent.SemanticOptions{Models: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fs := []*fakeEmbedder{{ref: "fake:1"}, {ref: "fake:2"}, {ref: "fake:3"}}
	for _, f := range append(fs, fs[0]) {
		f.axes = []string{"weather"}
		if _, err := s.Match(ctx, f, "weather", intent.Result{}); err != nil {
			t.Fatal(err)
		}
	}
	// fake:1 was pushed out by fake:3 and embeds its exemplars again.
	if _, texts := fs[0].count(); texts != 2*len(fakeExemplars)+2 {
		t.Errorf("fake:1 embedded %d texts, want its exemplars twice and two messages", texts)
	}
}

func TestSemanticWithLocal(t *testing.T) {
	s := builtinSemantic(t)
	// A reminder exemplar, lightly retyped: its nearest exemplar is
	// itself, nearer than any negative one.
	ms, err := s.Match(context.Background(), embed.Local{}, "kannst du mich jeden freitag an die stundenzettel erinnern? ich verpasse das ständig", intent.Result{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].Target != intent.Reminder || !strings.HasPrefix(ms[0].Trigger, "similarity ") {
		t.Fatalf("matches = %+v, want reminder", ms)
	}
	if got := intent.OpenedBy(ms[0]); !strings.HasPrefix(got, "opened by: reminder (similarity ") || !strings.HasSuffix(got, ", semantic)") {
		t.Errorf("OpenedBy = %q", got)
	}
}

func BenchmarkSemanticLocal(b *testing.B) {
	s := builtinSemantic(b)
	ctx := context.Background()
	e := embed.Local{}
	if _, err := s.Match(ctx, e, "warm up", intent.Result{}); err != nil {
		b.Fatal(err)
	}
	msgs := []string{"can you find out when the next train to Lyon leaves", "lol that's so true", "nhắc mình gọi cho mẹ lúc 6h nhé", "この写真に何が写ってる？"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Match(ctx, e, msgs[i%len(msgs)], intent.Result{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSemanticCapsTheMessage: a long message is embedded cut to its
// first 2 KB, on a character boundary; an empty one is not embedded.
func TestSemanticCapsTheMessage(t *testing.T) {
	s, err := intent.NewSemantic(fakeExemplars, intent.SemanticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeEmbedder{ref: "fake:cap", axes: []string{"weather"}}
	ctx := context.Background()
	if _, err := s.Match(ctx, f, "  ", intent.Result{}); err != nil {
		t.Fatal(err)
	}
	if calls, _ := f.count(); calls != 0 {
		t.Errorf("an empty message: %d Embed calls", calls)
	}
	if _, err := s.Match(ctx, f, "weather "+strings.Repeat("é", 64<<10), intent.Result{}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	longest := f.longest
	f.mu.Unlock()
	if longest > 2<<10 {
		t.Errorf("embedded a text of %d bytes, want at most 2048", longest)
	}
}

func TestParseExemplarsRefusesBadLines(t *testing.T) {
	for in, want := range map[string]string{
		`{"family":"nope","text":"x"}`:                 "exemplars:1: unknown family",
		"\n" + `{"family":"search","text":" "}`:        "exemplars:2: a text",
		`{"family":"search","txt":"x"}`:                "exemplars:1:",
		`{"text":"` + strings.Repeat("a", 3000) + `"}`: "exemplars:1: a text",
	} {
		if _, err := intent.ParseExemplars([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseExemplars(%.40q) = %v, want %q", in, err, want)
		}
	}
	if _, err := intent.ParseExemplars([]byte(strings.Repeat(`{"text":"x"}`+"\n", 2049))); err == nil {
		t.Error("2,049 exemplars: no error")
	}
	if _, err := intent.NewSemantic([]intent.Exemplar{{Text: "only chat"}}, intent.SemanticOptions{}); err == nil {
		t.Error("no request exemplar: no error")
	}
}

// TestSemanticEmbedsExemplarsOnce: turns arriving together for a new
// model share one embedding of its exemplars.
func TestSemanticEmbedsExemplarsOnce(t *testing.T) {
	s, err := intent.NewSemantic(fakeExemplars, intent.SemanticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeEmbedder{ref: "fake:once", axes: []string{"weather"}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := s.Match(context.Background(), f, "weather", intent.Result{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if calls, texts := f.count(); calls != 9 || texts != len(fakeExemplars)+8 {
		t.Errorf("%d calls of %d texts, want the exemplars once and 8 messages", calls, texts)
	}
}
