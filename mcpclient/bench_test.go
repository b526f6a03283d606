package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/tool"
)

// benchServer is a go-sdk server with a trivial echo tool on a loopback
// Streamable HTTP endpoint, without the request log startPeer keeps.
func benchServer(b *testing.B) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	addEcho(srv, "echo")
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL + "/mcp"
}

// BenchmarkToolCall compares one tool call through Quiver's path (the
// tool NewToolset built, run by dispatch: registration re-check in
// SQLite, argument validation, guarded origin-bound HTTP client, result
// rendering) with the same call made directly on an SDK ClientSession,
// against the same server. "overlay" is what a turn pays once to get the
// toolset from a pooled connection.
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	url := benchServer(b)

	b.Run("sdk", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer session.Close()
		params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
		b.ReportAllocs()
		for b.Loop() {
			res, err := session.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})

	e := newEnv(b, nil)
	e.add(Registration{Name: "bench", URL: url})
	d := dispatch.New(dispatch.Config{Results: e.st, Logger: slog.New(slog.DiscardHandler)})

	b.Run("quiver", func(b *testing.B) {
		ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("bench/echo"))
		dt := dispatch.Turn{Toolset: ts, Scope: tool.Scope{OrgID: org}}
		call := dispatch.Call{ID: "c", Name: "bench__echo", Args: json.RawMessage(`{"text":"hi"}`)}
		b.ReportAllocs()
		for b.Loop() {
			res, err := d.Call(ctx, dt, call)
			if err != nil || res.Content != "echo: hi" {
				b.Fatal(res, err)
			}
		}
	})

	b.Run("overlay", func(b *testing.B) {
		base := builtins()
		b.ReportAllocs()
		for b.Loop() {
			tr, err := NewToolset(ctx, e.regs, e.pool, org, e.mode, base)
			if err != nil {
				b.Fatal(err)
			}
			if base.With(tr.Overlay).Select(facts("bench/*")).Len() != 2 {
				b.Fatal("echo not selected")
			}
		}
	})
}

// BenchmarkWireName measures the name derivation NewToolset runs for every
// listed tool: a plain name, and one that is sanitised and hashed.
func BenchmarkWireName(b *testing.B) {
	for _, name := range []string{"search_issues", "tra cứu thời tiết.v2"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				WireName("github", name)
			}
		})
	}
}
