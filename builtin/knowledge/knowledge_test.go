package knowledge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	bk "github.com/quiverhq/quiver/builtin/knowledge"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/knowledge"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

func TestRequiresSaysWhichConditionFailed(t *testing.T) {
	tests := []struct {
		name string
		sel  turn.Selection
		want string
	}{
		{"both", turn.Selection{Knowledge: true, Backends: []string{"embedding"}}, ""},
		{"no knowledge", turn.Selection{Backends: []string{"embedding"}}, "the agent has no knowledge"},
		{"no embedding", turn.Selection{Knowledge: true}, "no embedding model is configured"},
		{"neither", turn.Selection{}, "the agent has no knowledge; no embedding model is configured"},
	}
	for _, tc := range tests {
		if got := bk.Requires(tc.sel); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSearchStaysInTheTurnsAgentAndOrg(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	x := &knowledge.Index{Store: st, Embedders: embed.Fixed{E: embed.Local{}}}
	add := func(org, agent, name, text string) {
		if _, err := x.Add(ctx, org, agent, knowledge.File{Name: name, MediaType: "text/plain", Data: []byte(text)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	add("o1", "helper", "policy.txt", "Refunds are paid within 14 days.")
	add("o1", "sales", "sales.txt", "Refunds for sales staff only.")
	add("o2", "helper", "other.txt", "Refunds of the other organisation.")
	tl := bk.Tool(x)
	res, err := tl.Run(ctx, tool.Scope{OrgID: "o1", Agent: "helper"}, json.RawMessage(`{"query":"refunds"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "policy.txt") || strings.Contains(res.Content, "sales.txt") || strings.Contains(res.Content, "other.txt") {
		t.Errorf("content = %q, want policy.txt alone", res.Content)
	}
	if _, err := tl.Run(ctx, tool.Scope{OrgID: "o1", Agent: "helper"}, json.RawMessage(`{"query":"refunds","limit":99}`)); err == nil {
		t.Error("a limit over the maximum was accepted")
	}
}
