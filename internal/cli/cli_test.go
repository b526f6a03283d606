package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
)

// run runs the CLI with an isolated data folder.
func run(t *testing.T, data string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := app.Env{
		Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == "QUIVER_DATA" {
				return data
			}
			return ""
		},
	}
	code = cli.Main(context.Background(), args, env)
	return code, out.String(), errb.String()
}

// TestEveryUsageText: every usage/NAME.txt is what its command's --help
// (and help spelt each way a group takes it) prints, whole, with exit
// status 0, nothing on stderr and no data folder; every file is some
// command's.
func TestEveryUsageText(t *testing.T) {
	helps := map[string][][]string{
		"quiver":      {{"help"}, {"--help"}, {"-h"}},
		"agent":       {{"agent", "--help"}, {"agent", "help"}},
		"agent-check": {{"agent", "check", "--help"}},
		"bench":       {{"bench", "--help"}, {"bench", "-h"}},
		"budget":      {{"budget", "--help"}, {"budget", "set", "--help"}},
		"call":        {{"call", "--help"}},
		"chat":        {{"chat", "-h"}},
		"export":      {{"export", "--help"}},
		"import":      {{"import", "--help"}},
		"intent":      {{"intent", "--help"}},
		"knowledge":   {{"knowledge", "--help"}, {"knowledge", "add", "--help"}, {"knowledge", "list", "--help"}},
		"skills":      {{"skills", "--help"}, {"skills", "add", "--help"}, {"skills", "attach", "--help"}},
		"tasks":       {{"tasks", "--help"}, {"tasks", "list", "--help"}, {"tasks", "cancel", "--help"}},
		"login-link":  {{"login-link", "--help"}},
		"mcp":         {{"mcp", "--help"}, {"mcp", "help"}},
		"mcp-add":     {{"mcp", "add", "--help"}},
		"mcp-list":    {{"mcp", "list", "--help"}},
		"mcp-probe":   {{"mcp", "probe", "--help"}},
		"mcp-remove":  {{"mcp", "remove", "--help"}},
		"mcp-serve":   {{"mcp", "serve", "--help"}},
		"mcp-toggle":  {{"mcp", "enable", "--help"}, {"mcp", "disable", "--help"}},
		"migrate":     {{"migrate", "--help"}, {"migrate", "up", "--help"}, {"migrate", "status", "--help"}},
		"prompt":      {{"prompt", "--help"}, {"prompt", "render", "--help"}},
		"secrets":     {{"secrets", "--help"}, {"secrets", "rotate", "--help"}},
		"serve":       {{"serve", "--help"}},
		"tools":       {{"tools", "--help"}},
		"transcript":  {{"transcript", "--help"}},
		"triggers":    {{"triggers", "--help"}, {"triggers", "mode", "--help"}},
		"turn":        {{"turn", "--help"}},
	}
	files, err := filepath.Glob("usage/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("usage texts: %v %v", files, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".txt"))
	}
	for name := range helps {
		if !slices.Contains(names, name) {
			t.Errorf("no usage/%s.txt", name)
		}
	}
	for _, name := range names {
		want, err := os.ReadFile(filepath.Join("usage", name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if len(helps[name]) == 0 {
			t.Errorf("usage/%s.txt is no command's --help", name)
		}
		for _, args := range helps[name] {
			data := filepath.Join(t.TempDir(), "data")
			code, out, stderr := run(t, data, args...)
			if code != 0 || out != string(want) || stderr != "" {
				t.Errorf("quiver %s: exit %d, stderr %q, stdout differs from usage/%s.txt: %t", strings.Join(args, " "), code, stderr, name, out != string(want))
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("quiver %s created the data folder", strings.Join(args, " "))
			}
		}
	}
}

func TestHelp(t *testing.T) {
	for _, cmd := range []string{"turn", "call", "tools", "prompt"} {
		code, out, _ := run(t, t.TempDir(), cmd, "--help")
		if code != 0 || !strings.HasPrefix(out, "Usage: quiver "+cmd) || !strings.Contains(out, "--json") {
			t.Errorf("%s --help: exit %d, output %q", cmd, code, out)
		}
	}
}

// TestCallHelpIsTrue: call --help names every field --json prints and
// every place the data folder can come from.
func TestCallHelpIsTrue(t *testing.T) {
	_, help, _ := run(t, t.TempDir(), "call", "--help")
	b, err := json.Marshal(app.CallOutput{})
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for f := range fields {
		if !strings.Contains(help, `"`+f+`"`) {
			t.Errorf("call --help does not name the --json field %q", f)
		}
	}
	for _, src := range []string{"$QUIVER_DATA", "$XDG_DATA_HOME", "~/.local/share/quiver"} {
		if !strings.Contains(help, src) {
			t.Errorf("call --help does not say the data folder may come from %s", src)
		}
	}
}

// TestClockOffsetRefused: a QUIVER_CLOCK_OFFSET that is not a duration is
// one usage line and exit status 2, before any command runs.
func TestClockOffsetRefused(t *testing.T) {
	var out, errb bytes.Buffer
	env := app.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "QUIVER_CLOCK_OFFSET" {
			return "a year"
		}
		return ""
	}}
	if code := cli.Main(context.Background(), []string{"tools"}, env); code != 2 || out.Len() != 0 ||
		!strings.Contains(errb.String(), "QUIVER_CLOCK_OFFSET") || strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, one line naming the variable", code, out.String(), errb.String())
	}
}

func TestMCPServeHelp(t *testing.T) {
	code, out, _ := run(t, t.TempDir(), "mcp", "serve", "--help")
	if code != 0 || !strings.Contains(out, "Usage: quiver mcp serve --agent FILE (--stdio | --http ADDR)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestAgentCheckHelp(t *testing.T) {
	code, out, _ := run(t, t.TempDir(), "agent", "check", "--help")
	if code != 0 || !strings.HasPrefix(out, "Usage: quiver agent check FILE") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, s := range []string{`"entry"`, `"message"`, `"suggestion"`, `"mcp_checked"`, "--org", "--data", "--config", "Exit status 0", "1 when there are warnings", "2 when FILE"} {
		if !strings.Contains(out, s) {
			t.Errorf("agent check --help does not mention %s", s)
		}
	}
	_, top, _ := run(t, t.TempDir(), "help")
	if !strings.Contains(top, "quiver agent check FILE") {
		t.Errorf("quiver help does not list agent check:\n%s", top)
	}
}

// TestBenchRefusesBadFlags: an unknown comparison, a rate that is not a
// positive number and a too short duration are each one line of bad
// input, and nothing runs.
func TestBenchRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--only", "turns,nope"},
		{"bench", "--rates", "50,x"},
		{"bench", "--rates", "-5"},
		{"bench", "--duration", "1ms"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		code, out, stderr := run(t, data, args...)
		if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("quiver %s: exit %d, stdout %q, stderr %q; want 2 and one line", strings.Join(args, " "), code, out, stderr)
		}
	}
}
