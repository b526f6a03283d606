package builtin

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/builtin/web"
)

func TestParseIAsk(t *testing.T) {
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	structured := &mcp.CallToolResult{StructuredContent: map[string]any{
		"answer": "A", "sources": []any{map[string]any{"title": "T", "url": "https://a.example/"}},
	}}
	cases := []struct {
		name        string
		res         *mcp.CallToolResult
		wantAnswer  string
		wantSources int
		wantKind    web.Kind
		wantErr     bool
	}{
		{name: "json text", res: text(`{"answer":"X","sources":[{"title":"S","url":"https://s.example/"}]}`), wantAnswer: "X", wantSources: 1},
		{name: "structured", res: structured, wantAnswer: "A", wantSources: 1},
		{name: "prose with links", res: text("Go is a language [Go](https://go.dev/) and [Spec](https://go.dev/ref/spec)."), wantAnswer: "Go is a language [Go](https://go.dev/) and [Spec](https://go.dev/ref/spec).", wantSources: 2},
		{name: "empty", res: text("  "), wantErr: true, wantKind: web.Empty},
		{name: "prose without sources", res: text("just words"), wantErr: true, wantKind: web.Malformed},
		{name: "link with a non-http scheme", res: text("see [x](javascript:alert(1))"), wantErr: true, wantKind: web.Malformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := parseIAsk(c.res)
			if c.wantErr {
				var ee *web.EngineError
				if !errors.As(err, &ee) || ee.Kind != c.wantKind {
					t.Fatalf("err %v, want kind %v", err, c.wantKind)
				}
				return
			}
			if err != nil || a.Answer != c.wantAnswer || len(a.Sources) != c.wantSources {
				t.Fatalf("got %+v, %v", a, err)
			}
		})
	}
}
