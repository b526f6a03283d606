package intent_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/intent"
)

// shippedHelpers are the always-on helpers Quiver ships, in registration
// order: what a turn declares for a message that asks for nothing.
var shippedHelpers = []string{"calculate", "read_tool_result", "read_transcript", "ask_clarifying_question", "suggest_next_actions"}

// shippedKept is what the mode keeps of the shipped catalog whatever the
// message: the helpers, then the recovery tool.
var shippedKept = append(slices.Clone(shippedHelpers), intent.RecoveryTool)

// TestPreview lays detections out over the shipped catalog: the helpers
// first and kept, unless gated, and the recovery tool always; a gated calculator declared because the
// message opened it; a family none of whose tools ships is unbuilt, and
// one whose tool is kept is not; every list encodes as a list.
func TestPreview(t *testing.T) {
	d := detector(t)
	cat := builtin.NewCatalog(builtin.CatalogDeps{})
	gate := intent.GateOptions{GateAlwaysOn: true}
	preview := func(msg string, o intent.GateOptions) intent.Report {
		return intent.Preview(cat, d.Detect(intent.Input{Text: msg}), o)
	}

	kept := preview("what's 15% of 80?", intent.GateOptions{})
	if !slices.Equal(kept.Families, []string{intent.Calculator}) || !slices.Equal(kept.Tools, shippedKept) || len(kept.Matches) == 0 {
		t.Errorf("got %+v, want the calculator opened and the always-on helpers declared", kept)
	}
	if len(kept.Declared) != len(kept.Tools) || kept.Declared[0] != (intent.Declared{Name: "calculate", Reason: intent.ReasonKept}) {
		t.Errorf("why declared %+v, want calculate kept first", kept.Declared)
	}

	gated := preview("what's 15% of 80?", gate)
	if want := []intent.Declared{{Name: intent.RecoveryTool, Reason: intent.ReasonKept}, {Name: "calculate", Reason: `opened by: calculator (phrase "% of", pack)`}}; !cmp.Equal(gated.Declared, want) || !slices.Equal(gated.Tools, []string{intent.RecoveryTool, "calculate"}) {
		t.Errorf("gating the helpers: tools %v, why %+v; want %+v", gated.Tools, gated.Declared, want)
	}
	if nothing := preview("hello", gate); !slices.Equal(nothing.Tools, []string{intent.RecoveryTool}) {
		t.Errorf("gating the helpers, hello: tools %v, want the recovery tool alone", nothing.Tools)
	}
	if hello := preview("hello", intent.GateOptions{}); !slices.Equal(hello.Tools, shippedKept) {
		t.Errorf("keeping the helpers, hello: tools %v, want %v", hello.Tools, shippedKept)
	}

	// The reminder family opens the scheduled-task tools.
	remind := preview("remind me tomorrow at 9 to call Bob", intent.GateOptions{})
	if len(remind.Unbuilt) != 0 || !slices.Contains(remind.Tools, "schedule_task") || !slices.Contains(remind.Tools, "update_scheduled_task") {
		t.Errorf("the reminder family: unbuilt %v, tools %v; want schedule_task and update_scheduled_task", remind.Unbuilt, remind.Tools)
	}
	image := preview("generate an image of a red fox", intent.GateOptions{})
	if !slices.Equal(image.Unbuilt, []string{intent.Image}) || slices.ContainsFunc(image.Tools, func(n string) bool { return strings.Contains(n, "image") }) {
		t.Errorf("a family without tools: unbuilt %v, tools %v; want image unbuilt and no image tool", image.Unbuilt, image.Tools)
	}
	calc := preview("calculate 12*7 please", intent.GateOptions{})
	if !slices.Equal(calc.Families, []string{intent.Calculator}) || len(calc.Unbuilt) != 0 {
		t.Errorf("the calculator family, kept helper: %+v, want it opened and not unbuilt", calc)
	}

	b, err := json.Marshal(preview("hello", gate))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"families":[],"tools":["enable_tools"],"declared":[{"name":"enable_tools","reason":"always-on: kept by deliberate tool mode"}],"unbuilt":[],"matches":[]}`; string(b) != want {
		t.Errorf("nothing opened encodes as %s, want %s", b, want)
	}
}

// TestPreviewAppsNeverUnbuilt: a community's "^" trigger opens apps every
// turn; apps has no shipped tools by design, so it is not unbuilt.
func TestPreviewAppsNeverUnbuilt(t *testing.T) {
	custom, err := intent.CompileCustom(map[string][]string{intent.Apps: {"^"}, intent.Video: {"^"}})
	if err != nil {
		t.Fatal(err)
	}
	res := detector(t).Detect(intent.Input{Text: "hello", Custom: custom})
	got := intent.Preview(builtin.NewCatalog(builtin.CatalogDeps{}), res, intent.GateOptions{})
	if d := cmp.Diff([]string{intent.Video, intent.Apps}, got.Families, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("families (-want +got):\n%s", d)
	}
	if !slices.Equal(got.Unbuilt, []string{intent.Video}) {
		t.Errorf("unbuilt %v, want [video] (apps never)", got.Unbuilt)
	}
}

// TestPreviewIsTheGate: Preview over a catalog declares what Gate
// declares over that catalog's selection, for the same open targets.
func TestPreviewIsTheGate(t *testing.T) {
	c, selected := gateCatalog()
	for _, o := range []intent.GateOptions{{}, {GateAlwaysOn: true}} {
		for _, open := range [][]string{nil, {intent.Image, intent.Search}, {intent.Files}} {
			res := intent.Result{Targets: open}
			got := intent.Preview(c, res, o)
			want := intent.Gate(selected, c, open, o)
			if d := cmp.Diff(want.Names(), got.Tools, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%+v, %v: tools (-gate +preview):\n%s", o, open, d)
			}
			if d := cmp.Diff(intent.Explain(want, res, open, o), got.Declared, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%+v, %v: why (-gate +preview):\n%s", o, open, d)
			}
		}
	}
}
