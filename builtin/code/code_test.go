package code_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/builtin/code"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/js"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// results is a store of tool results keyed as the real ones scope them:
// organisation, conversation, ref.
type results struct {
	store.Results
	bodies map[[3]string]string
}

func (r results) GetResult(_ context.Context, org, conv, ref string) (store.Result, error) {
	b, ok := r.bodies[[3]string{org, conv, ref}]
	if !ok {
		return store.Result{}, store.ErrNotFound
	}
	return store.Result{Ref: ref, Body: b}, nil
}

var scope = tool.Scope{OrgID: "org1", UserID: "alice", ConversationID: "conv1", TurnID: "t1"}

type env struct {
	t    *testing.T
	root string
	tool *tool.Tool
}

func newEnv(t *testing.T, cfg code.Config) *env {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ws")
	if cfg.Runner == nil {
		cfg.Runner = js.Runner{}
	}
	cfg.Workspace.Root = root
	cfg.Results = results{bodies: map[[3]string]string{
		{"org1", "conv1", "res_mine"}:   "1,2,3",
		{"org1", "conv2", "res_other"}:  "secret of another conversation",
		{"org2", "conv1", "res_orgtwo"}: "secret of another organisation",
	}}
	return &env{t: t, root: root, tool: code.Tool(cfg)}
}

func (e *env) call(args map[string]any) (tool.Result, error) {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.tool.Run(context.Background(), scope, raw)
}

func (e *env) mustCall(args map[string]any) string {
	e.t.Helper()
	res, err := e.call(args)
	if err != nil {
		e.t.Fatalf("run_code: %v", err)
	}
	if res.IsError {
		e.t.Fatalf("run_code failed: %s", res.Content)
	}
	return res.Content
}

func (e *env) file(name string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, scope.OrgID, scope.UserID, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

func TestRunWritesAndReadsInputs(t *testing.T) {
	e := newEnv(t, code.Config{})
	got := e.mustCall(map[string]any{
		"code": `const n = inputs.res_mine.split(',').map(Number);
			workspace.write('out/sum.json', JSON.stringify({sum: n.reduce((a, b) => a + b)}));
			workspace.write('chart.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>');
			console.log('sum', n.reduce((a, b) => a + b));`,
		"inputs": []string{"res_mine"},
	})
	want := "Output:\nsum 6\nFiles written to the workspace:\n- chart.svg (41 bytes, image/svg+xml)\n- out/sum.json (9 bytes, application/json)"
	if got != want {
		t.Errorf("result:\n%s\nwant:\n%s", got, want)
	}
	if f := e.file("out/sum.json"); f != `{"sum":6}` {
		t.Errorf("out/sum.json = %q", f)
	}
}

func TestInputsOfOtherScopesRefused(t *testing.T) {
	e := newEnv(t, code.Config{})
	for _, ref := range []string{"res_other", "res_orgtwo", "res_missing"} {
		t.Run(ref, func(t *testing.T) {
			res, err := e.call(map[string]any{"code": `console.log(JSON.stringify(inputs))`, "inputs": []string{ref}})
			want := "run_code: input " + ref + ": no such result in this conversation"
			if err == nil || tool.IsInfra(err) || err.Error() != want {
				t.Errorf("Run = %+v, %v; want the model's error %q", res, err, want)
			}
		})
	}
}

func TestTooManyInputsRefused(t *testing.T) {
	e := newEnv(t, code.Config{})
	res, err := e.call(map[string]any{"code": `1`, "inputs": []string{"res_mine", "res_mine", "res_mine", "res_mine"}})
	if err == nil || !strings.Contains(err.Error(), "array length 4 is greater than 3") {
		t.Errorf("4 inputs: %+v, %v; want them refused", res, err)
	}
}

// The script's writes obey the workspace's quotas: the per-file quota
// of the workspace configuration refuses a file write_file would refuse.
func TestWritesObeyTheWorkspaceQuota(t *testing.T) {
	e := newEnv(t, code.Config{Workspace: workspace.Config{MaxFileBytes: 100}})
	got := e.mustCall(map[string]any{"code": `
		try { workspace.write('big.txt', 'x'.repeat(101)); } catch (e) { console.log(e.message); }
		workspace.write('small.txt', 'x'.repeat(100));`})
	want := "Output:\nworkspace.write: per-file quota: big.txt would be 101 bytes; the limit is 100 bytes\nFiles written to the workspace:\n- small.txt (100 bytes, text/plain)"
	if got != want {
		t.Errorf("result:\n%s\nwant:\n%s", got, want)
	}
}

// Each configured limit reaches the runner: without it, the default
// (10 s, 64 KiB) would let the script finish or print on.
func TestConfiguredLimits(t *testing.T) {
	t.Run("wall", func(t *testing.T) {
		e := newEnv(t, code.Config{Limits: sandbox.Limits{Wall: 100 * time.Millisecond}})
		got := e.mustCall(map[string]any{"code": `const end = Date.now() + 3000; while (Date.now() < end) {} console.log('finished')`})
		if !strings.Contains(got, "Stop reason: wall") || strings.Contains(got, "finished") {
			t.Errorf("result:\n%s\nwant the wall limit to stop it", got)
		}
	})
	t.Run("output", func(t *testing.T) {
		e := newEnv(t, code.Config{Limits: sandbox.Limits{OutputBytes: 10}})
		got := e.mustCall(map[string]any{"code": `console.log('0123456789abcdef')`})
		want := "Output:\n0123456789\n[output cut at 10 bytes]\nError: stopped: the script printed more than its 10 bytes output limit\nStop reason: output"
		if got != want {
			t.Errorf("result:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("memory", func(t *testing.T) {
		e := newEnv(t, code.Config{Limits: sandbox.Limits{MemoryBytes: 2 << 20}})
		got := e.mustCall(map[string]any{"code": `const s = 'x'.repeat(4 << 20); console.log(s.length)`})
		if !strings.Contains(got, "Stop reason: memory") {
			t.Errorf("result:\n%s\nwant the memory limit to stop it", got)
		}
	})
}

func TestRequiresAndDescription(t *testing.T) {
	e := newEnv(t, code.Config{Level: code.LevelPython, Unavailable: "bwrap not found (Debian bubblewrap)"})
	spec := e.tool.Spec()
	if got := spec.Requires(turn.Selection{}); got != "bwrap not found (Debian bubblewrap)" {
		t.Errorf("Requires = %q", got)
	}
	if spec.AlwaysOn || spec.Family != "code" || spec.Access != tool.Write {
		t.Errorf("spec = always-on %v, family %q, access %v", spec.AlwaysOn, spec.Family, spec.Access)
	}
	if !strings.Contains(spec.Description, "Python 3") || !strings.Contains(spec.Description, "pip install fails") {
		t.Errorf("python description: %s", spec.Description)
	}
	js := newEnv(t, code.Config{}).tool.Spec()
	if js.Requires(turn.Selection{}) != "" || !strings.Contains(js.Description, "JavaScript") ||
		!strings.Contains(js.Description, "10s of wall time, 64.0 MiB of memory, 64.0 KiB of output") {
		t.Errorf("js description: %s", js.Description)
	}
}

func TestUnknownLevelPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for level ruby")
		}
	}()
	newEnv(t, code.Config{Level: "ruby"})
}
