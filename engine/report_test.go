package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
)

// TestReport: an inspection's report carries its agent, model, message
// and request as inspected; Deliberate Tool Mode's matches and reasons
// only when the mode gated the turn, and then never null.
func TestReport(t *testing.T) {
	ctx := context.Background()
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Config{
		Runtime:  engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public"}),
		Detector: intent.New(packs),
	})
	r := request("ana", "", true)
	r.Message = "What is 17.5% of 2,340?"
	for _, gated := range []bool{false, true} {
		r.Deliberate = nil
		if gated {
			r.Deliberate = &intent.Settings{Enabled: true}
		}
		ins, err := eng.Inspect(ctx, r, "")
		if err != nil {
			t.Fatal(err)
		}
		got := ins.Report()
		req := ins.Start.Request
		want := engine.Report{Agent: "helper", Model: "openai:m", Message: r.Message, System: req.System, Context: req.Context,
			Tools: req.Tools, Sizes: req.Sizes, Excluded: ins.Excluded, Warnings: ins.Warnings}
		if gated {
			want.Intent, want.Declared = ins.Matches, ins.Declared
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("gated %v: report (-want +got):\n%s", gated, d)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(b), `"intent":`) && strings.Contains(string(b), `"declared":`); has != gated {
			t.Errorf("gated %v: JSON has intent and declared: %v\n%s", gated, has, b)
		}
	}
}

// TestReportNeverNull: a zero inspection's report has no null list that
// a reader must tell apart from an empty one.
func TestReportNeverNull(t *testing.T) {
	got := engine.Inspection{Deliberate: true}.Report()
	if got.Excluded == nil || got.Intent == nil || got.Declared == nil {
		t.Errorf("report %+v: excluded, intent and declared must be empty, not nil", got)
	}
	if got := (engine.Inspection{}).Report(); got.Intent != nil || got.Declared != nil || got.Excluded == nil {
		t.Errorf("mode off: report %+v, want intent and declared nil, excluded empty", got)
	}
}
