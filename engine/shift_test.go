package engine_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestCommunityClassifierShift: the classifier shift an organisation
// stored (store.IntentSettings.ClassifierShift) reaches its turns'
// detection: a message the classifier opens a family for at the lowest
// bars opens it for the community that lowers them, and not for one
// that raises them, with the same detector.
func TestCommunityClassifierShift(t *testing.T) {
	ctx := context.Background()
	c, err := intent.BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	det, err := intent.NewClassifierOnly(c)
	if err != nil {
		t.Fatal(err)
	}
	// A validation message that only the lowered bars open a family for.
	lines, err := intent.ReadCorpus(os.DirFS("../intent"), "testdata/corpus/validation/*.jsonl", intent.CorpusFamilies)
	if err != nil {
		t.Fatal(err)
	}
	low, high := -0.5, 0.5
	var message, family string
	for _, l := range lines {
		lo := det.Detect(intent.Input{Text: l.Text, Shift: &low}).Targets
		hi := det.Detect(intent.Input{Text: l.Text, Shift: &high}).Targets
		if i := slices.IndexFunc(lo, func(t string) bool { return !slices.Contains(hi, t) }); i >= 0 {
			message, family = l.Text, lo[i]
			break
		}
	}
	if message == "" {
		t.Fatal("no validation message opens a family at -0.5 and not at +0.5")
	}
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eng := engine.New(engine.Config{
		Repos:    engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st},
		Runtime:  engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public"}),
		Detector: det, Now: func() time.Time { return start },
	})
	for _, tc := range []struct {
		shift int
		opens bool
	}{{store.MinClassifierShift, true}, {store.MaxClassifierShift, false}} {
		shift := tc.shift
		if err := st.PutIntentSettings(ctx, store.IntentSettings{OrgID: "acme", Enabled: true, HistoryTurns: -1, ClassifierShift: &shift, UpdatedAt: start}); err != nil {
			t.Fatal(err)
		}
		r := request("ana", "", true)
		r.Message = message
		ins, err := eng.Inspect(ctx, r, "")
		if err != nil {
			t.Fatal(err)
		}
		opened := slices.ContainsFunc(ins.Matches, func(m intent.Match) bool { return m.Target == family })
		if opened != tc.opens {
			t.Errorf("community shift %d: %q opened %s: %v, want %v (matches %+v)", shift, message, family, opened, tc.opens, ins.Matches)
		}
	}
}
