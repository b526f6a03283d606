package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tool"
)

// env is a workspace root with the tools built on it and a default scope.
type env struct {
	t     testing.TB
	root  string
	tools map[string]*tool.Tool
	scope tool.Scope
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = filepath.Join(t.TempDir(), "ws")
	}
	e := &env{t: t, root: cfg.Root, tools: map[string]*tool.Tool{}, scope: tool.Scope{OrgID: "org1", UserID: "user1", ConversationID: "c", TurnID: "t"}}
	for _, tl := range Tools(cfg) {
		e.tools[tl.Name()] = tl
	}
	return e
}

// dir returns the host folder of the default scope's workspace, creating it.
func (e *env) dir() string {
	e.t.Helper()
	d := filepath.Join(e.root, e.scope.OrgID, e.scope.UserID)
	if err := os.MkdirAll(d, 0o700); err != nil {
		e.t.Fatal(err)
	}
	return d
}

// put writes files into the default workspace behind the tools' back,
// then empties its lock file, as docs/postgres.md tells whoever does so,
// so that the next write measures the workspace again (see usage.go).
func (e *env) put(files ...string) {
	e.t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		p := filepath.Join(e.dir(), files[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[i+1]), 0o600); err != nil {
			e.t.Fatal(err)
		}
	}
	err := os.Truncate(filepath.Join(e.dir(), lockName), 0)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		e.t.Fatal(err)
	}
}

// get reads a file of the default workspace; "<missing>" when absent.
func (e *env) get(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir(), name))
	if errors.Is(err, os.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// call runs a tool in the default scope with JSON arguments.
func (e *env) call(name, args string) (string, error) {
	return e.callAs(e.scope, name, args)
}

func (e *env) callAs(s tool.Scope, name, args string) (string, error) {
	e.t.Helper()
	tl, ok := e.tools[name]
	if !ok {
		e.t.Fatalf("no tool %s", name)
	}
	res, err := tl.Run(context.Background(), s, json.RawMessage(args))
	return res.Content, err
}

// mustCall is call that fails the test on an error.
func (e *env) mustCall(name, args string) string {
	e.t.Helper()
	out, err := e.call(name, args)
	if err != nil {
		e.t.Fatalf("%s %s: %v", name, args, err)
	}
	return out
}

// wantErr fails unless err is a model-facing error containing every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	if tool.IsInfra(err) {
		t.Fatalf("got infrastructure error %v, want a model-facing one", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q spans lines", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func jsonArgs(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTools(t *testing.T) {
	type summary struct {
		Name     string
		Access   tool.Access
		Family   string
		AlwaysOn bool
		Macros   []string
	}
	var got []summary
	for _, tl := range Tools(Config{Root: t.TempDir()}) {
		s := tl.Spec()
		got = append(got, summary{s.Name, s.Access, s.Family, s.AlwaysOn, s.Macros})
	}
	want := []summary{
		{"list_files", tool.Read, "workspace", true, []string{"list_files_tool"}},
		{"search_files", tool.Read, "workspace", true, []string{"search_files_tool"}},
		{"read_file", tool.Read, "workspace", true, []string{"read_file_tool"}},
		{"write_file", tool.Write, "workspace", true, []string{"write_file_tool"}},
		{"edit_file", tool.Write, "workspace", true, []string{"edit_file_tool"}},
		{"delete_file", tool.Write, "workspace", true, []string{"delete_file_tool"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tools (-want +got):\n%s", diff)
	}
}

// TestDefinitionsSize bounds what the six definitions cost on every call.
func TestDefinitionsSize(t *testing.T) {
	const budget = 7000
	total := 0
	for _, tl := range Tools(Config{Root: t.TempDir()}) {
		def, err := json.Marshal(map[string]any{
			"name":        tl.Name(),
			"description": tl.Spec().Description,
			"parameters":  tl.Schema(),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d chars", tl.Name(), len(def))
		total += len(def)
	}
	t.Logf("total: %d chars", total)
	if total > budget {
		t.Errorf("definitions total %d chars; the budget is %d", total, budget)
	}
}

func TestToolsPanicsWithoutRoot(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Tools(Config{}) did not panic")
		}
	}()
	Tools(Config{})
}

func TestConfigDefaults(t *testing.T) {
	got := Config{Root: "r"}.withDefaults()
	want := Config{Root: "r", MaxFileBytes: 1 << 20, MaxWorkspaceBytes: 100 << 20, MaxFiles: 10000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withDefaults (-want +got):\n%s", diff)
	}
	set := Config{Root: "r", MaxFileBytes: 1, MaxWorkspaceBytes: 2, MaxFiles: 3}
	if diff := cmp.Diff(set, set.withDefaults()); diff != "" {
		t.Errorf("withDefaults changed set limits (-want +got):\n%s", diff)
	}
}

func TestWorkspaceCreatedPrivate(t *testing.T) {
	e := newEnv(t, Config{})
	if got := e.mustCall("list_files", `{}`); got != "The workspace is empty." {
		t.Errorf("list_files on a new workspace = %q", got)
	}
	for _, d := range []string{e.root, filepath.Join(e.root, "org1"), filepath.Join(e.root, "org1", "user1")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s mode = %v, want 0700", d, fi.Mode().Perm())
		}
	}
}

func TestScopeIsolation(t *testing.T) {
	e := newEnv(t, Config{})
	a := tool.Scope{OrgID: "orgX", UserID: "alice"}
	if _, err := e.callAs(a, "write_file", `{"files":[{"path":"secret.txt","content":"alice's secret"}]}`); err != nil {
		t.Fatal(err)
	}
	others := []struct {
		name  string
		scope tool.Scope
	}{
		{"other user same org", tool.Scope{OrgID: "orgX", UserID: "bob"}},
		{"same user other org", tool.Scope{OrgID: "orgY", UserID: "alice"}},
	}
	for _, o := range others {
		t.Run(o.name, func(t *testing.T) {
			if got, _ := e.callAs(o.scope, "list_files", `{}`); got != "The workspace is empty." {
				t.Errorf("list_files = %q, want an empty workspace", got)
			}
			_, err := e.callAs(o.scope, "read_file", `{"path":"secret.txt"}`)
			wantErr(t, err, "does not exist")
			got, err := e.callAs(o.scope, "search_files", `{"queries":["secret"]}`)
			if err != nil || !strings.HasPrefix(got, "No matches") {
				t.Errorf("search_files = %q, %v; want no matches", got, err)
			}
		})
	}
	if got, _ := e.callAs(a, "read_file", `{"path":"secret.txt"}`); !strings.Contains(got, "alice's secret") {
		t.Errorf("owner cannot read back: %q", got)
	}
}

func TestBadScopeIsInfra(t *testing.T) {
	e := newEnv(t, Config{})
	tests := []struct {
		name  string
		scope tool.Scope
	}{
		{"empty org", tool.Scope{UserID: "u"}},
		{"empty user", tool.Scope{OrgID: "o"}},
		{"dot user", tool.Scope{OrgID: "o", UserID: "."}},
		{"dotdot org", tool.Scope{OrgID: "..", UserID: "u"}},
		{"slash user", tool.Scope{OrgID: "o", UserID: "a/b"}},
		{"backslash user", tool.Scope{OrgID: "o", UserID: `a\b`}},
		{"absolute user", tool.Scope{OrgID: "o", UserID: "/etc"}},
		{"nul org", tool.Scope{OrgID: "o\x00", UserID: "u"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for name := range e.tools {
				args := map[string]string{
					"list_files": `{}`, "search_files": `{"queries":["x"]}`, "read_file": `{"path":"a"}`,
					"write_file": `{"files":[{"path":"a","content":"x"}]}`, "edit_file": `{"path":"a","old_string":"x","new_string":"y"}`,
					"delete_file": `{"path":"a"}`,
				}[name]
				_, err := e.callAs(tc.scope, name, args)
				if !tool.IsInfra(err) {
					t.Errorf("%s: error %v, want an infrastructure error", name, err)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(e.root); len(entries) != 0 {
		t.Errorf("bad scopes created %v under the root", entries)
	}
}

func TestUnknownFieldsFail(t *testing.T) {
	e := newEnv(t, Config{})
	tests := []struct{ tool, args string }{
		{"list_files", `{"folder":"","recursive":true}`},
		{"search_files", `{"queries":["x"],"regex":true}`},
		{"read_file", `{"path":"a","lines":3}`},
		{"write_file", `{"files":[{"path":"a","content":"x","mode":"0755"}]}`},
		{"write_file", `{"files":[{"path":"a","content":"x"}],"overwrite":true}`},
		{"edit_file", `{"path":"a","old_string":"x","new_string":"y","count":2}`},
		{"delete_file", `{"path":"a","recursive":true}`},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			_, err := e.call(tc.tool, tc.args)
			var ae *tool.ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v, want *tool.ArgError", err)
			}
		})
	}
	if got := e.get("a"); got != "<missing>" {
		t.Errorf("a rejected call wrote a file: %q", got)
	}
}
