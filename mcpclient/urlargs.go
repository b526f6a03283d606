package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/quiverhq/quiver/netguard"
)

// urlArgChecker returns a check that vets, before a call, every top-level
// argument that holds URLs (a property whose schema says format uri, or
// named url, uri or urls) against the network policy, so a model cannot
// point a server's tool at an address Quiver itself would refuse. The
// server's own later fetches are outside Quiver's control. Nil when the
// schema has no such property.
func urlArgChecker(inputSchema any, guard *netguard.Client) func(context.Context, json.RawMessage) error {
	fields := urlFields(inputSchema)
	if len(fields) == 0 {
		return nil
	}
	return func(ctx context.Context, args json.RawMessage) error {
		var obj map[string]any
		if err := json.Unmarshal(args, &obj); err != nil {
			return nil // validation already ran; nothing to vet
		}
		for _, f := range fields {
			for _, u := range stringsIn(obj[f]) {
				if err := guard.CheckURL(ctx, u); err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
			}
		}
		return nil
	}
}

// urlFields lists the top-level properties of a schema that hold URLs.
func urlFields(inputSchema any) []string {
	raw, err := json.Marshal(inputSchema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Format string `json:"format"`
			Items  *struct {
				Format string `json:"format"`
			} `json:"items"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []string
	for name, p := range s.Properties {
		lower := strings.ToLower(name)
		uri := p.Format == "uri" || p.Format == "url" || (p.Items != nil && p.Items.Format == "uri")
		if uri || lower == "url" || lower == "uri" || lower == "urls" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// stringsIn returns v if it is a string, or the strings of v if it is an
// array.
func stringsIn(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
