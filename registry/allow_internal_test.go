package registry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/tool"
)

// allowCatalog holds tools admitted in each way rule 3 of Select knows:
// by name, by an explicit family, by AllowAs entries only (an MCP
// server's: not by its bare name), and a tool whose AllowAs entry is
// another tool's name.
func allowCatalog() *Catalog {
	var schema jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object"}`), &schema); err != nil {
		panic(err)
	}
	h := func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil }
	c := New()
	for _, spec := range []tool.Spec{
		{Name: "plain"},
		{Name: "searcher", Family: "web"},
		{Name: "fetcher", Family: "web"},
		{Name: "echo", Family: "mcp:one", AllowAs: []string{"one/echo", "one"}},
		{Name: "one__echo", Family: "mcp:two", AllowAs: []string{"two/echo", "plain"}},
		{Name: "web", AllowAs: []string{"web"}},
	} {
		spec.Description = "Does " + spec.Name + "."
		c.Register(tool.NewRaw(spec, &schema, h))
	}
	return c
}

// FuzzAllowedBy checks the catalog's kept allowlist entries against
// allowed, the rule as written, for any allowlist.
func FuzzAllowedBy(f *testing.F) {
	for _, s := range []string{"", "plain", "web", "echo", "one/echo,two/echo", "one,plain,mcp:one", "searcher,fetcher,web,echo,one__echo"} {
		f.Add(s)
	}
	c := allowCatalog()
	f.Fuzz(func(t *testing.T, list string) {
		names := strings.Split(list, ",")
		got := c.allowedBy(names)
		set := allowSet(names)
		for i, tl := range c.tools {
			spec := tl.Spec()
			if want := allowed(&spec, tl.Name(), set); got[i] != want {
				t.Errorf("allowlist %q: %s admitted %v, the rule says %v", list, tl.Name(), got[i], want)
			}
		}
	})
}
