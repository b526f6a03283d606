package js_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/js"
)

// TestMain fails the package when a test leaves a goroutine behind: a run
// must not outlive Run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The tests below each try to break one guarantee of the package doc.

func TestNoIO(t *testing.T) {
	const refused = `: the sandbox has no modules (no std, os, fs, net or packages)`
	tests := []struct {
		name string
		code string
		want sandbox.Result
	}{
		{
			name: "import os",
			code: `import * as os from 'os'; console.log(os.getenv('HOME'));`,
			want: sandbox.Result{Error: `uncaught TypeError: module load failed: cannot import "os"` + refused},
		},
		{
			name: "import std",
			code: `import * as std from 'std'; console.log(std.getenviron());`,
			want: sandbox.Result{Error: `uncaught TypeError: module load failed: cannot import "std"` + refused},
		},
		{
			name: "install a package from a URL",
			code: `import _ from 'https://esm.sh/lodash';`,
			want: sandbox.Result{Error: `uncaught TypeError: module load failed: cannot import "https://esm.sh/lodash"` + refused},
		},
		{
			name: "dynamic import, also through eval",
			code: `for (const m of ['os', 'npm:left-pad', 'node:child_process']) {
				try { await import(m); console.log('loaded', m); } catch (e) { console.log(e.message); }
			}
			try { await (0, eval)("import('std')"); } catch (e) { console.log(e.message); }`,
			want: sandbox.Result{Stdout: `module load failed: cannot import "os"` + refused + "\n" +
				`module load failed: cannot import "npm:left-pad"` + refused + "\n" +
				`module load failed: cannot import "node:child_process"` + refused + "\n" +
				"no function filename for import()\n"},
		},
		{
			// Sockets, name resolution, files, environment, processes and
			// timers all need one of these; none exists.
			name: "no host objects",
			code: `const names = ['fetch', 'XMLHttpRequest', 'WebSocket', 'require', 'process', 'Deno', 'Bun',
				'std', 'os', 'print', 'scriptArgs', 'setTimeout', 'setInterval', 'queueMicrotask', 'navigator',
				'Worker', 'importScripts', 'environ', 'workspace',
				'__quiver_boot', '__quiver_print', '__quiver_read', '__quiver_write', '__quiver_list'];
			console.log(names.filter(n => typeof globalThis[n] !== 'undefined').join(',') || 'none');
			console.log(typeof this);`,
			want: sandbox.Result{Stdout: "none\nundefined\n"},
		},
		{
			name: "the global object holds only the built-ins and ours",
			code: `const builtins = new Set(['Object', 'Function', 'Array', 'Number', 'parseFloat', 'parseInt',
				'Infinity', 'NaN', 'undefined', 'Boolean', 'String', 'Symbol', 'Date', 'Promise', 'RegExp',
				'Error', 'AggregateError', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError',
				'TypeError', 'URIError', 'InternalError', 'globalThis', 'JSON', 'Math', 'Intl', 'ArrayBuffer',
				'Atomics', 'Uint8Array', 'Int8Array', 'Uint16Array', 'Int16Array', 'Uint32Array', 'Int32Array',
				'Float16Array', 'Float32Array', 'Float64Array', 'Uint8ClampedArray', 'BigUint64Array',
				'BigInt64Array', 'DataView', 'Map', 'BigInt', 'Set', 'WeakMap', 'WeakSet', 'Proxy', 'Reflect',
				'FinalizationRegistry', 'WeakRef', 'decodeURI', 'decodeURIComponent', 'encodeURI',
				'encodeURIComponent', 'escape', 'unescape', 'isFinite', 'isNaN', 'SharedArrayBuffer',
				'Iterator', 'eval', 'console', 'inputs']);
			console.log(Object.getOwnPropertyNames(globalThis).filter(n => !builtins.has(n)).join(',') || 'none');`,
			want: sandbox.Result{Stdout: "none\n"},
		},
		{
			name: "Atomics.wait cannot block past the limits",
			code: `try { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); } catch (e) { console.log(e.message); }`,
			want: sandbox.Result{Stdout: "cannot block in this thread\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, sandbox.Job{Code: tt.code})
			if diff := cmp.Diff(tt.want, got, ignoreElapsed); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkspacePathsRefused(t *testing.T) {
	const abs = " is an absolute path; use a path relative to the workspace, like notes/todo.md"
	const outside = " leads outside the workspace; use a path inside it"
	tests := []struct {
		name, call, want string
	}{
		{"/etc/passwd", `workspace.read('/etc/passwd')`, "workspace.read: /etc/passwd" + abs},
		{"/proc/1/environ", `workspace.read('/proc/1/environ')`, "workspace.read: /proc/1/environ" + abs},
		{"parent", `workspace.read('../x')`, "workspace.read: ../x" + outside},
		{"parent after a folder", `workspace.read('notes/../../data/quiver.db')`, "workspace.read: notes/../../data/quiver.db" + outside},
		{"NUL", `workspace.read('a\0/etc/passwd')`, "workspace.read: path contains a control character"},
		{"backslash root", `workspace.read('\\\\server\\share')`, `workspace.read: \\server\share` + abs},
		{"empty", `workspace.read('')`, "workspace.read: path is empty"},
		{"not a string", `workspace.read({toString() { return '/etc/passwd'; }})`, "workspace.read: path must be a string, not an object"},
		{"missing", `workspace.read()`, "workspace.read: path must be a string, not undefined"},
		{"reserved name", `workspace.read('.quiver-lock')`, "workspace.read: .quiver-lock: names starting with .quiver- are reserved for Quiver's own files; use another name"},
		{"too long", `workspace.read('a/'.repeat(600))`, "workspace.read: path is 1200 bytes long; the limit is 1024"},
		{"write outside", `workspace.write('/tmp/x', 'y')`, "workspace.write: /tmp/x" + abs},
		{"write to the parent", `workspace.write('../../etc/cron.d/x', 'y')`, "workspace.write: ../../etc/cron.d/x" + outside},
		{"write a non-string", `workspace.write('a.txt', {a: 1})`, "workspace.write: text must be a string, not an object (use JSON.stringify for data)"},
		{"write too much", `workspace.write('big.txt', 'x'.repeat(8 << 20) + 'y')`, "workspace.write: the text is 8388609 characters long; the limit is 8388608 bytes"},
		{"write too many bytes", `workspace.write('big.txt', 'é'.repeat(5 << 20))`, "workspace.write: the text is 10485760 bytes long; the limit is 8388608 bytes"},
		{"list outside", `workspace.list('..')`, "workspace.list: .." + outside},
		{"list the root", `workspace.list('/')`, "workspace.list: /" + abs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newFake(nil)
			code := `try { ` + tt.call + `; console.log('allowed'); } catch (e) { console.log(e instanceof Error, e.message); }`
			got := run(t, sandbox.Job{Code: code, Workspace: ws})
			want := sandbox.Result{Stdout: "true " + tt.want + "\n"}
			if diff := cmp.Diff(want, got, ignoreElapsed); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
			if len(ws.calls) != 0 {
				t.Errorf("the Workspace was called: %q", ws.calls)
			}
		})
	}
}

func TestWorkspace(t *testing.T) {
	ws := newFake(map[string]string{"data/in.csv": "a,b\n1,2\n3,4\n"})
	code := `
		const rows = workspace.read('data/in.csv').trim().split('\n').slice(1).map(l => l.split(',').map(Number));
		workspace.write('out/./sum.json', JSON.stringify({sum: rows.flat().reduce((a, b) => a + b, 0)}));
		console.log(workspace.list().join(' '));
		console.log(workspace.list('out').join(' '));
		try { workspace.read('missing.txt'); } catch (e) { console.log(e.message); }`
	got := run(t, sandbox.Job{Code: code, Workspace: ws})
	want := sandbox.Result{Stdout: "data/in.csv out/sum.json\nout/sum.json\nworkspace.read: missing.txt: file does not exist\n"}
	if diff := cmp.Diff(want, got, ignoreElapsed); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
	wantCalls := []string{"read data/in.csv", "write out/sum.json", "list .", "list out", "read missing.txt"}
	if diff := cmp.Diff(wantCalls, ws.calls); diff != "" {
		t.Errorf("Workspace calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(`{"sum":10}`, ws.files["out/sum.json"]); diff != "" {
		t.Errorf("written file (-want +got):\n%s", diff)
	}
}

func TestWorkspacePanicIsAnError(t *testing.T) {
	ws := newFake(nil)
	ws.panic = true
	// The script catches the exception and loops: only the interrupt the
	// panic causes can end it before the wall limit.
	code := `try { workspace.read('a.txt'); } catch (e) {} for (;;) {}`
	res, err := js.Runner{}.Run(context.Background(), sandbox.Job{Code: code, Workspace: ws})
	if err == nil || err.Error() != "sandbox/js: workspace read panicked: fake workspace broke" {
		t.Fatalf("Run error = %v, want the workspace's panic", err)
	}
	if res.Stop == sandbox.StopWall {
		t.Errorf("the script ran to its wall limit instead of being interrupted")
	}
}

func TestLimits(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name   string
		code   string
		inputs []sandbox.Input
		limits sandbox.Limits
		want   sandbox.Result
	}{
		{
			name:   "loop forever",
			code:   `while (true) {}`,
			limits: sandbox.Limits{Wall: short},
			want:   sandbox.Result{Stop: sandbox.StopWall, Error: "stopped: the script ran past its 200ms limit"},
		},
		{
			name:   "catching the interrupt",
			code:   `for (;;) { try { while (true) {} } catch (e) {} finally { continue; } }`,
			limits: sandbox.Limits{Wall: short},
			want:   sandbox.Result{Stop: sandbox.StopWall, Error: "stopped: the script ran past its 200ms limit"},
		},
		{
			name:   "await forever",
			code:   `console.log('start'); for (;;) await null;`,
			limits: sandbox.Limits{Wall: short},
			want:   sandbox.Result{Stdout: "start\n", Stop: sandbox.StopWall, Error: "stopped: the script ran past its 200ms limit"},
		},
		{
			name:   "promise jobs feeding themselves after the module ends",
			code:   `function f() { Promise.resolve().then(f); } f();`,
			limits: sandbox.Limits{Wall: short},
			want:   sandbox.Result{Stop: sandbox.StopWall, Error: "stopped: the script ran past its 200ms limit"},
		},
		{
			name:   "catastrophic regular expression",
			code:   `/(a+)+$/.test('a'.repeat(40) + 'b');`,
			limits: sandbox.Limits{Wall: short},
			want:   sandbox.Result{Stop: sandbox.StopWall, Error: "stopped: the script ran past its 200ms limit"},
		},
		{
			name:   "allocate past the limit",
			code:   `const keep = []; for (;;) keep.push(new Array(1e5).fill(1));`,
			limits: sandbox.Limits{MemoryBytes: 16 * mib},
			want:   sandbox.Result{Stop: sandbox.StopMemory, Error: "stopped: the script ran out of memory (its limit is 16 MiB)"},
		},
		{
			name:   "one huge buffer",
			code:   `const b = new ArrayBuffer(1e9); console.log(b.byteLength);`,
			limits: sandbox.Limits{MemoryBytes: 16 * mib},
			want:   sandbox.Result{Stop: sandbox.StopMemory, Error: "stopped: the script ran out of memory (its limit is 16 MiB)"},
		},
		{
			name:   "allocate past the limit after an await",
			code:   `await null; let s = []; for (let i = 0; ; i++) s.push('x'.repeat(1000) + i);`,
			limits: sandbox.Limits{MemoryBytes: 16 * mib},
			want:   sandbox.Result{Stop: sandbox.StopMemory, Error: "stopped: the script ran out of memory (its limit is 16 MiB)"},
		},
		{
			name:   "inputs larger than the memory limit",
			code:   `console.log(inputs.a.length);`,
			inputs: []sandbox.Input{{Name: "a", Content: strings.Repeat("a", sandbox.MaxInputBytes)}},
			limits: sandbox.Limits{MemoryBytes: sandbox.MinMemoryBytes},
			want:   sandbox.Result{Stop: sandbox.StopMemory, Error: "stopped: the script ran out of memory (its limit is 1 MiB)"},
		},
		{
			name:   "print forever",
			code:   `for (let i = 0; ; i++) console.log('line', i);`,
			limits: sandbox.Limits{OutputBytes: 40},
			want: sandbox.Result{
				Stdout:    "line 0\nline 1\nline 2\nline 3\nline 4\nline ",
				Truncated: true, Stop: sandbox.StopOutput,
				Error: "stopped: the script printed more than its 40 bytes output limit",
			},
		},
		{
			// Megabyte strings, three to a line, caught exceptions: the host
			// keeps 64 KiB (TestOutputLimitStopsTheScript shows the script
			// stops there).
			name: "print gigabytes",
			code: `const mb = 'z'.repeat(1 << 20); for (;;) { try { console.log(mb, mb, mb); } catch (e) {} }`,
			want: sandbox.Result{
				Stdout:    strings.Repeat("z", 64<<10),
				Truncated: true, Stop: sandbox.StopOutput,
				Error: "stopped: the script printed more than its 64 KiB output limit",
			},
		},
		{
			name:   "output cut at a character boundary",
			code:   `console.log('ééééééé');`,
			limits: sandbox.Limits{OutputBytes: 11},
			want: sandbox.Result{
				Stdout: "ééééé", Truncated: true, Stop: sandbox.StopOutput,
				Error: "stopped: the script printed more than its 11 bytes output limit",
			},
		},
		{
			name:   "the smallest memory limit runs a small script",
			code:   `console.log(JSON.stringify({ok: [1, 2, 3].length}));`,
			limits: sandbox.Limits{MemoryBytes: sandbox.MinMemoryBytes},
			want:   sandbox.Result{Stdout: "{\"ok\":3}\n"},
		},
		{
			name:   "output exactly at the limit",
			code:   `console.log('abc');`,
			limits: sandbox.Limits{OutputBytes: 4},
			want:   sandbox.Result{Stdout: "abc\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, sandbox.Job{Code: tt.code, Limits: tt.limits, Inputs: tt.inputs})
			if diff := cmp.Diff(tt.want, got, ignoreElapsed); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
			// The runner is as good as new after a limit.
			after := run(t, sandbox.Job{Code: `console.log([1, 2, 3].map(x => x * x).join());`})
			if diff := cmp.Diff(sandbox.Result{Stdout: "1,4,9\n"}, after, ignoreElapsed); diff != "" {
				t.Errorf("the next job's Result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeepNativeRecursion builds structures whose native handling
// recurses: past the stack limit each must throw, not overflow the Go
// stack, which would kill the server.
func TestDeepNativeRecursion(t *testing.T) {
	tests := []struct {
		name, code, wantPrefix string
	}{
		{"JSON.stringify", `let o = {}; for (let i = 0; i < 1e5; i++) o = {o}; JSON.stringify(o);`,
			"uncaught InternalError: stack overflow\n    at stringify (native)"},
		{"JSON.parse", `JSON.parse('['.repeat(1e5) + ']'.repeat(1e5));`, "uncaught SyntaxError: stack overflow"},
		{"nested arrays to a string", `let a = []; for (let i = 0; i < 1e5; i++) a = [a]; String(a);`,
			"uncaught InternalError: stack overflow\n    at join (native)"},
		{"proxy chain", `let p = {}; for (let i = 0; i < 1e5; i++) p = new Proxy(p, {}); p.x;`,
			"uncaught InternalError: stack overflow"},
		{"parser", `eval('('.repeat(1e5) + '1' + ')'.repeat(1e5));`, "uncaught SyntaxError: stack overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, sandbox.Job{Code: tt.code})
			if !strings.HasPrefix(got.Error, tt.wantPrefix) || got.Stop != sandbox.StopNone {
				t.Errorf("Result = %+v, want an error starting %q", got, tt.wantPrefix)
			}
		})
	}
}

// TestOutputLimitStopsTheScript shows the script is stopped by the print
// that fills the output, not left running until the wall limit: the code
// after that print, even past a catch, never runs.
func TestOutputLimitStopsTheScript(t *testing.T) {
	ws := newFake(nil)
	code := `try { console.log('x'.repeat(100)); } catch (e) {} workspace.write('after.txt', 'still running');`
	got := run(t, sandbox.Job{Code: code, Workspace: ws, Limits: sandbox.Limits{OutputBytes: 10}})
	want := sandbox.Result{
		Stdout: "xxxxxxxxxx", Truncated: true, Stop: sandbox.StopOutput,
		Error: "stopped: the script printed more than its 10 bytes output limit",
	}
	if diff := cmp.Diff(want, got, ignoreElapsed); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
	if len(ws.calls) != 0 {
		t.Errorf("the script ran on after filling its output: %q", ws.calls)
	}
}

// cancelWorkspace cancels the run's context when the script reads, so the
// test knows the script is running, without a sleep.
type cancelWorkspace struct {
	fakeWorkspace
	cancel context.CancelFunc
}

func (w *cancelWorkspace) ReadFile(string) ([]byte, error) {
	w.cancel()
	return []byte("cancelled"), nil
}

func TestCancel(t *testing.T) {
	t.Run("while running", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ws := &cancelWorkspace{fakeWorkspace: *newFake(nil), cancel: cancel}
		// The loop takes far longer than stopping does, and far less than
		// the wall limit: a write after it means the cancellation was missed.
		code := `console.log(workspace.read('go')); for (let i = 0; i < 1e7; i++) {} workspace.write('after.txt', 'still running');`
		res, err := js.Runner{}.Run(ctx, sandbox.Job{Code: code, Workspace: ws})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run error = %v, want context.Canceled", err)
		}
		// The interrupt may land before or after the console.log that
		// prints what the read returned: either is a prompt stop.
		if res.Stdout != "" && res.Stdout != "cancelled\n" {
			t.Errorf("Stdout = %q, want nothing or the line printed before the stop", res.Stdout)
		}
		want := sandbox.Result{Stdout: res.Stdout, Stop: sandbox.StopCancelled, Error: "stopped: the run was cancelled"}
		if diff := cmp.Diff(want, res, ignoreElapsed); diff != "" {
			t.Errorf("Result (-want +got):\n%s", diff)
		}
		if len(ws.calls) != 0 {
			t.Errorf("the script ran on after the cancellation: %q", ws.calls)
		}
	})
	t.Run("context deadline before the wall limit", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), short)
		defer cancel()
		res, err := js.Runner{}.Run(ctx, sandbox.Job{Code: `for (;;) { try { for (;;) {} } catch (e) {} }`})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run error = %v, want context.DeadlineExceeded", err)
		}
		if res.Stop != sandbox.StopCancelled {
			t.Errorf("Stop = %q, want %q (the 10 s wall limit is not what stopped it)", res.Stop, sandbox.StopCancelled)
		}
	})
	t.Run("before running", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ws := newFake(nil)
		res, err := js.Runner{}.Run(ctx, sandbox.Job{Code: `workspace.write('a', 'b'); for (;;) {}`, Workspace: ws})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run error = %v, want context.Canceled", err)
		}
		if res.Stop != sandbox.StopCancelled || len(ws.calls) != 0 {
			t.Errorf("Stop = %q, Workspace calls %q; want cancelled before the script ran", res.Stop, ws.calls)
		}
	})
}

func TestInvalidJobRefused(t *testing.T) {
	ws := newFake(nil)
	job := sandbox.Job{
		Code:      `workspace.write('ran', 'yes');`,
		Inputs:    []sandbox.Input{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}},
		Workspace: ws,
	}
	_, err := js.Runner{}.Run(context.Background(), job)
	if err == nil || err.Error() != "sandbox: 4 inputs; the limit is 3" {
		t.Errorf("Run error = %v, want the inputs refused", err)
	}
	if len(ws.calls) != 0 {
		t.Errorf("the script ran: %q", ws.calls)
	}
}

func TestConcurrentRuns(t *testing.T) {
	var wg sync.WaitGroup
	results := make([]sandbox.Result, 8)
	errs := make([]error, len(results))
	for i := range results {
		wg.Go(func() {
			code := `let s = 0; for (let i = 0; i < 1000; i++) s += i; console.log(s + inputs.n.length);`
			job := sandbox.Job{Code: code, Inputs: []sandbox.Input{{Name: "n", Content: strings.Repeat("x", i)}}}
			results[i], errs[i] = js.Runner{}.Run(context.Background(), job)
		})
	}
	wg.Wait()
	for i, res := range results {
		want := sandbox.Result{Stdout: strconv.Itoa(499500+i) + "\n"}
		if diff := cmp.Diff(want, res, ignoreElapsed); diff != "" || errs[i] != nil {
			t.Errorf("run %d: error %v, Result (-want +got):\n%s", i, errs[i], diff)
		}
	}
}
