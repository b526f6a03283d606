package registry_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/registry"
)

// TestAgentCheckWriteText: each warning is a line naming the file and the
// part of the agent it is about; a clean allowlist says how many entries
// it has (one "entry", else "entries"); the note comes last.
func TestAgentCheckWriteText(t *testing.T) {
	tests := []struct {
		name  string
		check registry.AgentCheck
		want  string
	}{
		{"warnings", registry.AgentCheck{File: "a.yaml", Agent: "helper", Entries: 3, Warnings: []registry.Warning{
			{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"},
			{Field: "switches", Entry: "emoji", Message: `"emoji" is not a switch`},
		}}, "a.yaml: tools: \"web_serch\" is not a tool or family name; did you mean \"web_search\"?\n" +
			"a.yaml: switches: \"emoji\" is not a switch\n"},
		{"one entry", registry.AgentCheck{File: "a.yaml", Agent: "helper", Entries: 1},
			"a.yaml: agent helper: allowlist clean (1 entry)\n"},
		{"note", registry.AgentCheck{File: "a.yaml", Agent: "helper", Entries: 2, Note: "MCP entries could not be checked"},
			"a.yaml: agent helper: allowlist clean (2 entries)\na.yaml: note: MCP entries could not be checked\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			tc.check.WriteText(&b)
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
