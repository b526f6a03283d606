package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSkillFolder writes a skill folder named name with SKILL.md and one
// reference file, and returns its path.
func writeSkillFolder(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, "reference"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "---\nname: " + name + "\ndescription: Write invoices in the house format.\n---\nRead reference/format.md, then write the invoice.\n"
	for p, content := range map[string]string{"SKILL.md": doc, "reference/format.md": "# Format\nTotals last.\n"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSkillsThroughTheCLI: a skill added, listed, attached and loaded by
// load_skill through dispatch (quiver call, which collects the turn's
// skills from the store); removed, it is gone from the agent.
func TestSkillsThroughTheCLI(t *testing.T) {
	data := t.TempDir()
	must := func(want string, args ...string) string {
		t.Helper()
		code, out, stderr := run(t, data, args...)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("quiver %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(args, " "), code, out, stderr, want)
		}
		return out
	}
	must("added skill invoices: 1 files", "skills", "add", writeSkillFolder(t, "invoices"), "--org", "Acme")
	must("replaced skill invoices", "skills", "add", writeSkillFolder(t, "invoices"), "--org", "Acme")
	must("invoices  1      22     Write invoices", "skills", "list", "--org", "Acme")
	must("attached skill invoices to agent helper", "skills", "attach", "helper", "invoices", "--org", "Acme")
	var rows []struct{ Name string }
	if err := json.Unmarshal([]byte(must("invoices", "skills", "list", "--agent", "helper", "--json", "--org", "Acme")), &rows); err != nil || len(rows) != 1 {
		t.Errorf("list --agent --json: %v %v", rows, err)
	}

	agent := agentWith(t, "[load_skill]")
	must("Read reference/format.md", "call", "load_skill", "--agent", agent, "--org", "Acme", "--args", `{"name":"invoices"}`)
	must("Totals last.", "call", "load_skill", "--agent", agent, "--org", "Acme", "--args", `{"name":"invoices","path":"reference/format.md"}`)

	must("detached skill invoices from agent helper", "skills", "detach", "helper", "invoices", "--org", "Acme")
	must("attached", "skills", "attach", "helper", "invoices", "--org", "Acme")
	must("removed skill invoices", "skills", "remove", "invoices", "--org", "Acme")
	must("no skills", "skills", "list", "--agent", "helper", "--org", "Acme")
}

// TestSkillsAddRefuses: a skill the format or a limit refuses is bad
// input (exit 2) with the reason, and nothing is stored.
func TestSkillsAddRefuses(t *testing.T) {
	data := t.TempDir()
	dir := writeSkillFolder(t, "invoices")
	renamed := filepath.Join(filepath.Dir(dir), "bills")
	if err := os.Rename(dir, renamed); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, data, "skills", "add", renamed)
	if code != 2 || !strings.Contains(stderr, `"invoices" does not match its folder "bills"`) {
		t.Errorf("a name other than its folder's: exit %d, stderr %q", code, stderr)
	}
	if code, out, _ := run(t, data, "skills", "list"); code != 0 || !strings.Contains(out, "no skills") {
		t.Errorf("after a refused add: exit %d, %q", code, out)
	}
	if code, _, stderr := run(t, data, "skills", "attach", "helper", "nope"); code != 2 || !strings.Contains(stderr, "not found") {
		t.Errorf("attaching an unknown skill: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := run(t, data, "skills", "attach", "helper"); code != 2 {
		t.Errorf("attach with one operand: exit %d", code)
	}
}
