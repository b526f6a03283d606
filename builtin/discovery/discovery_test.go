package discovery_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/builtin/discovery"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/turn"
)

// TestDefinitionCost: the recovery tool costs at most 800 characters of
// definitions (issue 19's ceiling) and lists every family it opens.
func TestDefinitionCost(t *testing.T) {
	tl := discovery.Tool(nil)
	if n := tl.DeclarationChars(); n > 800 {
		t.Fatalf("enable_tools costs %d characters of definitions, over 800", n)
	} else {
		t.Logf("enable_tools: %d characters of definitions", n)
	}
	for _, f := range intent.Targets {
		if f == intent.Apps || f == intent.Discovery {
			continue
		}
		if !strings.Contains(tl.Spec().Description, "\n"+f+": ") {
			t.Errorf("the description has no line for %s", f)
		}
	}
}

// recorder records what a call opened.
type recorder struct{ opened []string }

func (r *recorder) OpenIntentTargets(_ context.Context, org, conv string, ts []string) ([]string, error) {
	if org != "acme" || conv != "c1" {
		return nil, nil
	}
	r.opened = append(r.opened, ts...)
	return r.opened, nil
}

func TestEnableDeclaresTheFamilyAndRecordsIt(t *testing.T) {
	rec := &recorder{}
	tl := discovery.Tool(rec)
	sc := turn.Scope{OrgID: "acme", ConversationID: "c1"}
	res, err := tl.Run(context.Background(), sc, json.RawMessage(`{"family":"search","reason":"the weather tomorrow"}`))
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	if !slices.Equal(res.Effect.Declare, intent.TargetTools(intent.Search)) || len(rec.opened) != 0 || res.Effect.Declared == nil {
		t.Fatalf("declared %v, recorded %v before the loop declared anything", res.Effect.Declare, rec.opened)
	}
	// The loop calls Declared only when it declared some of the tools.
	if err := res.Effect.Declared(context.Background(), []string{"web_search"}); err != nil || !slices.Equal(rec.opened, []string{"search"}) {
		t.Fatalf("after the loop declared web_search: recorded %v, %v", rec.opened, err)
	}
	for _, bad := range []string{`{"family":"apps","reason":"x"}`, `{"family":"search","reason":"` + strings.Repeat("x", 201) + `"}`, `{"family":"search"}`} {
		res, err := tl.Run(context.Background(), sc, json.RawMessage(bad))
		if err == nil && !res.IsError {
			t.Errorf("%s accepted", bad)
		}
		if len(res.Effect.Declare) > 0 {
			t.Errorf("%s declared %v", bad, res.Effect.Declare)
		}
	}
	if got := tl.Spec().Requires(turn.Selection{}); got == "" {
		t.Error("enable_tools is declared with the mode off")
	}
	if got := tl.Spec().Requires(turn.Selection{Deliberate: true}); got != "" {
		t.Errorf("enable_tools is left out under the mode: %s", got)
	}
}
