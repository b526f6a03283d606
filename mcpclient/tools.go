package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Bounds on what a server's tool listing and results may put in a turn.
const (
	// MaxDescriptionChars caps an imported tool's description.
	MaxDescriptionChars = 2048
	// MaxSchemaBytes caps an imported tool's serialised input schema.
	MaxSchemaBytes = 16 << 10
	// MaxToolNameChars caps a listed tool's name, as the MCP
	// specification does; a longer one is not offered.
	MaxToolNameChars = 128
	// MaxResultChars caps the text of one call's result (dispatch then
	// stores anything over its threshold and shows a preview).
	MaxResultChars = 200_000
)

// callFunc runs one call of an imported tool on its server, under the
// tool's real name.
type callFunc func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error)

// importSpec is what importTool needs besides the listed tool.
type importSpec struct {
	server string // registration name
	family string // the tools' family: mcp:<server>, or the built-in's a typed server replaces
	macros []string
	// requires and fragments are the replaced built-in's (see importer);
	// nil for a general server's tools.
	requires  func(turn.Selection) string
	fragments []string
	call      callFunc
	// checkArgs vets arguments before the call (URL arguments against the
	// network policy); nil means none.
	checkArgs func(ctx context.Context, args json.RawMessage) error
	timeout   time.Duration
}

// importTool turns a listed MCP tool into a Quiver tool named
// WireName(server, tool name), whose calls reach the server's tool under
// its real name. The error says why the tool cannot be offered (its
// schema); it names no secret.
func importTool(t *mcp.Tool, s importSpec) (*tool.Tool, error) {
	switch {
	case t.Name == "":
		return nil, errors.New("the tool has no name")
	case utf8.RuneCountInString(t.Name) > MaxToolNameChars:
		return nil, fmt.Errorf("name is longer than %d characters (the MCP limit)", MaxToolNameChars)
	}
	schema, err := importSchema(t.InputSchema)
	if err != nil {
		return nil, err
	}
	wire := WireName(s.server, t.Name)
	desc := capText(strings.TrimSpace(t.Description), MaxDescriptionChars)
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, s.server)
	}
	access := tool.Write
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		access = tool.Read
	}
	spec := tool.Spec{
		Name:        wire,
		Family:      s.family,
		Macros:      s.macros,
		Description: desc,
		Access:      access,
		AllowAs:     []string{s.server + "/" + t.Name, s.server + "/*"},
		Origin:      tool.Origin{Server: s.server, Tool: t.Name},
		Timeout:     s.timeout,
		Requires:    s.requires,
		Fragments:   s.fragments,
	}
	return tool.Import(spec, schema, func(ctx context.Context, _ tool.Scope, args json.RawMessage) (tool.Result, error) {
		if s.checkArgs != nil {
			if err := s.checkArgs(ctx, args); err != nil {
				return tool.Result{}, err
			}
		}
		res, err := s.call(ctx, args)
		if err != nil {
			return tool.Result{}, err
		}
		return renderResult(wire, res), nil
	})
}

// importSchema decodes a listed input schema: an object schema of bounded
// size. The $schema keyword is dropped (servers declare drafts the
// validator does not know; the keywords tools use are common to them).
func importSchema(in any) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, errors.New("input schema is not JSON")
	}
	if len(raw) > MaxSchemaBytes {
		return nil, fmt.Errorf("input schema is larger than %d bytes", MaxSchemaBytes)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("input schema does not parse: %v", firstLine(err.Error()))
	}
	if s.Type != "object" {
		return nil, errors.New("input schema root is not an object schema")
	}
	s.Schema = ""
	return &s, nil
}

// Render turns a call result into the text a model reads, as a tool of a
// registered server would return it.
func Render(name string, r *mcp.CallToolResult) tool.Result { return renderResult(name, r) }

// renderResult turns a call result into the text the model reads: text
// parts as they are, other parts as short bracketed notes, structured
// content as JSON when there is no text. Capped at MaxResultChars.
func renderResult(name string, r *mcp.CallToolResult) tool.Result {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, renderContent(c))
	}
	if len(parts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n\n")
	if text == "" {
		text = "(no content)"
		if r.IsError {
			text = fmt.Sprintf("%s failed without saying why", name)
		}
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if utf8.RuneCountInString(text) > MaxResultChars {
		text = capText(text, MaxResultChars) + fmt.Sprintf("\n[result cut at %d characters]", MaxResultChars)
	}
	return tool.Result{Content: text, IsError: r.IsError}
}

func renderContent(c mcp.Content) string {
	switch v := c.(type) {
	case *mcp.TextContent:
		return v.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", v.MIMEType, len(v.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", v.MIMEType, len(v.Data))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource: %s <%s>]", v.Name, v.URI)
	case *mcp.EmbeddedResource:
		if v.Resource == nil {
			return "[resource]"
		}
		if v.Resource.Text != "" {
			return fmt.Sprintf("[resource %s]\n%s", v.Resource.URI, v.Resource.Text)
		}
		return fmt.Sprintf("[resource %s: %s, %d bytes]", v.Resource.URI, v.Resource.MIMEType, len(v.Resource.Blob))
	}
	return "[unsupported content]"
}

// capText cuts s to at most n characters.
func capText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// printable replaces every rune of s that is not printable (control
// codes, escape sequences' ESC, invalid UTF-8) with U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// mcpTool is a listed tool as route hands it on.
type mcpTool struct{ *mcp.Tool }
