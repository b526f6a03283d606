package mcpclient

import (
	"strings"
	"testing"
)

// TestWriteViews: registrations are a table with a header, columns
// aligned; none is one line naming the organisation.
func TestWriteViews(t *testing.T) {
	var b strings.Builder
	views := []View{
		{Name: "github", Type: "general", Enabled: true, Token: "set", URL: "https://github.example/mcp", Tools: []string{"create_issue"}},
		{Name: "docs", Type: "general", Token: "not set", URL: "https://docs.example/mcp"},
	}
	if err := WriteViews(&b, "acme", views); err != nil {
		t.Fatal(err)
	}
	want := "NAME    TYPE     ENABLED  TOKEN    URL                         TOOLS\n" +
		"github  general  true     set      https://github.example/mcp  " + DescribeNames("github", []string{"create_issue"}) + "\n" +
		"docs    general  false    not set  https://docs.example/mcp    " + DescribeNames("docs", nil) + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteViews(&b, "acme", nil); err != nil || b.String() != "no MCP servers registered for acme\n" {
		t.Errorf("no registrations: %q, %v", b.String(), err)
	}
}
