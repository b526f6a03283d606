package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/builtin/web"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/secret"
)

// FixedCaller calls a tool of an MCP server the deployment configures
// (not a user registration), under the deployment's network mode, as
// *mcpclient.Service's CallFixed does; key names the server in the
// caller's pool and errors. It must be safe for concurrent use.
type FixedCaller interface {
	CallFixed(ctx context.Context, key string, t mcpclient.Target, name string, args any) (*mcp.CallToolResult, error)
}

// iaskMCP serves web_search's IAsk engine from a tool of an MCP server the
// deployment configures (web.iask_mcp_url), through the MCP client's
// guarded, pooled connections.
type iaskMCP struct {
	svc    FixedCaller
	target mcpclient.Target
	tool   string
}

// Ask implements web.IAskBackend: it calls the tool with {"query": q} and
// reads the answer as JSON {"answer", "sources": [{"title","url"}]} (as
// structured content or as the text), or else as prose whose Markdown
// links are its sources.
func (b *iaskMCP) Ask(ctx context.Context, query string) (web.IAskAnswer, error) {
	res, err := b.svc.CallFixed(ctx, "iask", b.target, b.tool, map[string]any{"query": query})
	switch {
	case mcpclient.IsCooldown(err):
		return web.IAskAnswer{}, &web.EngineError{Kind: web.CoolingDown, Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return web.IAskAnswer{}, &web.EngineError{Kind: web.TimedOut, Err: err}
	case err != nil:
		return web.IAskAnswer{}, &web.EngineError{Kind: web.Failed, Err: err}
	case res.IsError:
		return web.IAskAnswer{}, &web.EngineError{Kind: web.Failed, Err: errors.New("the IAsk tool returned an error")}
	}
	return parseIAsk(res)
}

// parseIAsk reads an IAsk tool result.
func parseIAsk(res *mcp.CallToolResult) (web.IAskAnswer, error) {
	var text strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	if a, ok := iaskJSON(res.StructuredContent); ok {
		return a, nil
	}
	if a, ok := iaskJSON(json.RawMessage(text.String())); ok {
		return a, nil
	}
	answer := strings.TrimSpace(text.String())
	if answer == "" {
		return web.IAskAnswer{}, &web.EngineError{Kind: web.Empty}
	}
	a := web.IAskAnswer{Answer: answer}
	for _, m := range markdownLink.FindAllStringSubmatch(answer, 20) {
		a.Sources = append(a.Sources, web.IAskSource{Title: m[1], URL: m[2]})
	}
	if len(a.Sources) == 0 {
		return web.IAskAnswer{}, &web.EngineError{Kind: web.Malformed, Err: errors.New("an answer without sources")}
	}
	return a, nil
}

var markdownLink = regexp.MustCompile(`\[([^\]\n]{1,200})\]\((https?://[^)\s]+)\)`)

// iaskJSON decodes {"answer", "sources"} from structured content or text.
func iaskJSON(v any) (web.IAskAnswer, bool) {
	if v == nil {
		return web.IAskAnswer{}, false
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return web.IAskAnswer{}, false
		}
	}
	var r struct {
		Answer  *string          `json:"answer"`
		Sources []web.IAskSource `json:"sources"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Answer == nil {
		return web.IAskAnswer{}, false
	}
	return web.IAskAnswer{Answer: *r.Answer, Sources: r.Sources}, true
}

// iaskTarget is the configured IAsk MCP server, token from its env var.
func iaskTarget(url, tokenEnv string, getenv func(string) string) mcpclient.Target {
	t := mcpclient.Target{URL: url}
	if tokenEnv != "" && getenv != nil {
		t.Token = secret.Redacted(getenv(tokenEnv))
	}
	return t
}
