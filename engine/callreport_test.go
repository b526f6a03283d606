package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/tool"
)

// TestCallReport: the report carries the result's fields under the names
// "quiver call --json" prints; its text is the content, then a pause's
// question and each suggestion.
func TestCallReport(t *testing.T) {
	res := tool.Result{Content: "Which file?", Ref: "res_1", IsError: true,
		Effect: tool.Effect{Pause: &tool.Pause{Question: "Which file?"}, NextActions: []string{"list files", "stop"}}}
	r := engine.NewCallReport(res)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if string(fields["is_error"]) != "true" || string(fields["content"]) != `"Which file?"` || string(fields["ref"]) != `"res_1"` || fields["effect"] == nil {
		t.Errorf("JSON %s", b)
	}
	var text strings.Builder
	r.WriteText(&text)
	if want := "Which file?\n\n[pause] Which file?\n[suggest] list files\n[suggest] stop\n"; text.String() != want {
		t.Errorf("text %q, want %q", text.String(), want)
	}
}
