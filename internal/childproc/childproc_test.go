package childproc

import (
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestEnv: a child gets the inherited variables and the given ones,
// sorted, a given one replacing the inherited one; nothing else of this
// process's environment (a provider key) reaches it.
func TestEnv(t *testing.T) {
	t.Setenv("TZ", "Asia/Ho_Chi_Minh")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	got := Env(map[string]string{"TZ": "UTC", "QUIVER_B": "2", "QUIVER_A": "1"})
	for _, want := range []string{"LANG=C.UTF-8", "TZ=UTC", "QUIVER_A=1", "QUIVER_B=2"} {
		if !slices.Contains(got, want) {
			t.Errorf("Env = %q, want it to hold %q", got, want)
		}
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "OPENAI_API_KEY=") || kv == "TZ=Asia/Ho_Chi_Minh" {
			t.Errorf("Env holds %q", kv)
		}
	}
	if a, b := slices.Index(got, "QUIVER_A=1"), slices.Index(got, "QUIVER_B=2"); a > b {
		t.Errorf("given variables not sorted: %q", got)
	}
}

// shell returns /bin/sh, skipping the test where there is none.
func shell(t *testing.T) string {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	return sh
}

// TestStartReadsLines: each line of each stream reaches its watcher;
// the log keeps stderr's, stdout's only when asked, up to MaxLog; the
// exit status is the process's.
func TestStartReadsLines(t *testing.T) {
	script := `echo err1 >&2; echo out1; echo err2 >&2; echo out2; exit 3`
	for _, tc := range []struct {
		name      string
		logStdout bool
		maxLog    int
		wantLog   []string
		notLog    []string
	}{
		{name: "stderr only", wantLog: []string{"err1", "err2"}, notLog: []string{"out1"}},
		{name: "both", logStdout: true, wantLog: []string{"err1", "err2", "out1", "out2"}},
		{name: "capped", maxLog: len("err1\n"), wantLog: []string{"err1"}, notLog: []string{"err2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var errs, outs []string
			p, err := Start(Spec{Bin: shell(t), Args: []string{"-c", script}, Env: Env(nil), LogStdout: tc.logStdout, MaxLog: tc.maxLog,
				Stderr: func(l string) { mu.Lock(); errs = append(errs, l); mu.Unlock() },
				Stdout: func(l string) { mu.Lock(); outs = append(outs, l); mu.Unlock() },
			})
			if err != nil {
				t.Fatal(err)
			}
			if code := p.Wait(); code != 3 {
				t.Errorf("exit status %d, want 3", code)
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(errs, ",") != "err1,err2" || strings.Join(outs, ",") != "out1,out2" {
				t.Errorf("watchers saw stderr %q, stdout %q", errs, outs)
			}
			log := p.Log()
			for _, w := range tc.wantLog {
				if !strings.Contains(log, w+"\n") {
					t.Errorf("log %q lacks %q", log, w)
				}
			}
			for _, n := range tc.notLog {
				if strings.Contains(log, n) {
					t.Errorf("log %q holds %q", log, n)
				}
			}
		})
	}
}

// TestKill: Kill ends a process that would run for a minute, and what
// it started (its process group); Running and Wait say so.
func TestKill(t *testing.T) {
	p, err := Start(Spec{Bin: shell(t), Args: []string{"-c", "sleep 60 & echo started; wait"}, Env: Env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Running() {
		t.Fatal("not running after Start")
	}
	p.Kill()
	if p.Running() || p.Wait() != -1 {
		t.Errorf("after Kill: running %v, status %d, want stopped by a signal (-1)", p.Running(), p.Wait())
	}
	p.Kill() // a no-op once exited
}
