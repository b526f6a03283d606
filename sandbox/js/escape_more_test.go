package js_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/sandbox"
)

// The tests below try what the Python level's escape tests try, so both
// levels answer the same list (docs/code.md).

func TestNoSocketsNamesOrProcesses(t *testing.T) {
	code := `
const tries = {
	tcp: () => Deno.connect({hostname: '127.0.0.1', port: 22}),
	udp: () => require('dgram').createSocket('udp4'),
	unix: () => require('net').connect('/run/docker.sock'),
	fetch: () => fetch('http://169.254.169.254/'),
	resolve: () => require('dns').lookup('example.com'),
	fork: () => require('child_process').fork('x'),
	exec: () => os.exec(['/bin/sh', '-c', 'id']),
	worker: () => new Worker('x.js'),
	pip: () => os.exec(['pip', 'install', 'requests']),
};
for (const [name, f] of Object.entries(tries)) {
	try { f(); console.log(name, 'allowed'); } catch (e) { console.log(name, e.constructor.name); }
}
for (const m of ['net', 'node:dgram', 'dns', 'child_process', 'os']) {
	try { await import(m); console.log(m, 'loaded'); } catch (e) { console.log(m, 'refused'); }
}`
	got := run(t, sandbox.Job{Code: code})
	want := "tcp ReferenceError\nudp ReferenceError\nunix ReferenceError\nfetch ReferenceError\nresolve ReferenceError\n" +
		"fork ReferenceError\nexec ReferenceError\nworker ReferenceError\npip ReferenceError\n" +
		"net refused\nnode:dgram refused\ndns refused\nchild_process refused\nos refused\n"
	if got.Stdout != want || got.Error != "" {
		t.Errorf("Result = %+v; want stdout %q", got, want)
	}
}

func TestEnvironmentUnreachable(t *testing.T) {
	t.Setenv("QUIVER_FAKE_SECRET", "sk-test-do-not-leak")
	// Walk everything reachable from the global object for the secret.
	code := `
const seen = new Set(), found = [];
function walk(v, depth) {
	if (v === null || (typeof v !== 'object' && typeof v !== 'function') || seen.has(v) || depth > 6) return;
	seen.add(v);
	for (const k of Reflect.ownKeys(v)) {
		let x;
		try { x = v[k]; } catch (e) { continue; }
		if (typeof x === 'string' && x.includes('sk-test')) found.push(String(k));
		walk(x, depth + 1);
	}
}
walk(globalThis, 0);
console.log(found.length, typeof process, typeof std, typeof environ);`
	got := run(t, sandbox.Job{Code: code})
	if got.Stdout != "0 undefined undefined undefined\n" || strings.Contains(got.Stdout, "sk-test-do-not-leak") {
		t.Errorf("Result = %+v", got)
	}
}

// Promise jobs that keep writing to the workspace stop when Run returns:
// nothing of the script runs after it.
func TestNoBackgroundWork(t *testing.T) {
	ws := newFake(nil)
	code := `let n = 0;
(function loop() { workspace.write('pid.txt', String(n++)); Promise.resolve().then(loop); })();`
	got := run(t, sandbox.Job{Code: code, Workspace: ws, Limits: sandbox.Limits{Wall: short}})
	if got.Stop != sandbox.StopWall {
		t.Fatalf("Result = %+v; want the wall limit to stop it", got)
	}
	after := len(ws.calls)
	run(t, sandbox.Job{Code: "for (let i = 0; i < 1e5; i++) {}"})
	if len(ws.calls) != after {
		t.Errorf("the script wrote %d times after Run returned", len(ws.calls)-after)
	}
}
