package python_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/python"
)

// The tests below each try to break one guarantee of the package doc;
// none needs the internet: the sandbox's network namespace has only a
// loopback of its own.

// try wraps one Python statement: it prints "allowed" when the statement
// succeeds, else the exception's type.
func try(stmt string) string {
	return "try:\n    " + stmt + "\n    print('allowed')\nexcept BaseException as e:\n    print(type(e).__name__)\n"
}

func TestNetworkRefused(t *testing.T) {
	r := newRunner(t, python.Config{})
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	unixPath := filepath.Join(t.TempDir(), "server.sock")
	unixL, err := net.Listen("unix", unixPath)
	if err != nil {
		t.Fatal(err)
	}
	defer unixL.Close()
	abstract, err := net.Listen("unix", "@quiver-sandbox-test-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer abstract.Close()
	tcpPort := tcp.Addr().(*net.TCPAddr).Port
	tests := []struct{ name, code, want string }{
		{"TCP to the host's loopback", try("import socket; socket.create_connection(('127.0.0.1', " + strconv.Itoa(tcpPort) + "), timeout=2)"), "ConnectionRefusedError\n"},
		{"TCP to an outside address", try("import socket; socket.create_connection(('10.0.0.1', 80), timeout=2)"), "OSError\n"},
		{"TCP over IPv6", try("import socket; socket.create_connection(('2001:db8::1', 80), timeout=2)"), "OSError\n"},
		{"UDP to an outside address", try("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('192.0.2.1', 53))"), "OSError\n"},
		{"a Unix socket of the host", try("import socket; s = socket.socket(socket.AF_UNIX); s.connect(" + strconv.Quote(unixPath) + ")"), "FileNotFoundError\n"},
		{"an abstract Unix socket of the host", try("import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0quiver-sandbox-test-" + strconv.Itoa(os.Getpid()) + "')"), "ConnectionRefusedError\n"},
		{"resolve a name", try("import socket; socket.getaddrinfo('example.com', 443)"), "gaierror\n"},
		{"resolve localhost by name", try("import socket; socket.gethostbyname('localhost')"), "gaierror\n"},
		{"download", try("import urllib.request; urllib.request.urlopen('http://example.com', timeout=2)"), "URLError\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r, sandbox.Job{Code: tt.code})
			if res.Stdout != tt.want || res.Error != "" {
				t.Errorf("Result = %+v; want stdout %q", res, tt.want)
			}
		})
	}
	// The host's listeners saw nothing: a UDP datagram would be waiting.
	udp.SetReadDeadline(time.Now())
	if n, _, err := udp.ReadFrom(make([]byte, 1)); err == nil {
		t.Errorf("the host's UDP socket received %d bytes", n)
	}
}

func TestEnvironmentEmpty(t *testing.T) {
	t.Setenv("QUIVER_FAKE_SECRET", "sk-test-do-not-leak")
	r := newRunner(t, python.Config{})
	code := `
import os
print(sorted(os.environ))
for p in ['/proc/self/environ', '/proc/1/environ', '/proc/` + strconv.Itoa(os.Getpid()) + `/environ']:
    try:
        print(p, open(p, 'rb').read())
    except OSError as e:
        print(p, type(e).__name__)
`
	res := run(t, r, sandbox.Job{Code: code})
	if strings.Contains(res.Stdout, "sk-test-do-not-leak") || strings.Contains(res.Stdout, "QUIVER_FAKE_SECRET") {
		t.Errorf("the script saw the secret:\n%s", res.Stdout)
	}
	want := "['HOME', 'LANG', 'MPLBACKEND', 'MPLCONFIGDIR', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'PATH', 'PWD', 'PYTHONDONTWRITEBYTECODE']\n"
	if !strings.HasPrefix(res.Stdout, want) {
		t.Errorf("environment:\n%s\nwant it to start with %s", res.Stdout, want)
	}
}

func TestFilesOutsideRefused(t *testing.T) {
	r := newRunner(t, python.Config{})
	data := t.TempDir() // stands for the server's data folder
	secret := filepath.Join(data, "quiver.db")
	if err := os.WriteFile(secret, []byte("secret rows"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, code, want string }{
		{"/etc/shadow", try("open('/etc/shadow').read()"), "FileNotFoundError\n"},
		{"/etc/passwd", try("open('/etc/passwd').read()"), "FileNotFoundError\n"},
		{"/etc/resolv.conf", try("open('/etc/resolv.conf').read()"), "FileNotFoundError\n"},
		{"the data folder", try("open(" + strconv.Quote(secret) + ").read()"), "FileNotFoundError\n"},
		{"/root", try("import os; os.listdir('/root')"), "FileNotFoundError\n"},
		{"the host's processes", try("import os; assert not any(p.isdigit() and int(p) > 3 for p in os.listdir('/proc'))"), "allowed\n"},
		{"write to /usr", try("open('/usr/x', 'w')"), "OSError\n"},
		{"write to /", try("open('/x', 'w')"), "OSError\n"},
		{"write to /etc", try("open('/etc/x', 'w')"), "OSError\n"},
		{"write to the data folder", try("open(" + strconv.Quote(filepath.Join(data, "x")) + ", 'w')"), "FileNotFoundError\n"},
		{"mount", try("import ctypes; assert ctypes.CDLL(None).mount(b'none', b'/usr', b'tmpfs', 0, None) == 0"), "AssertionError\n"},
		{"write to the workspace", try("open('ok.txt', 'w').write('x')"), "allowed\n"},
		{"write to /tmp", try("open('/tmp/ok.txt', 'w').write('x')"), "allowed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r, sandbox.Job{Code: tt.code})
			if res.Stdout != tt.want {
				t.Errorf("Result = %+v; want stdout %q", res, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(data, "x")); err == nil {
		t.Error("the script wrote into the data folder")
	}
}

func TestPipInstallFails(t *testing.T) {
	r := newRunner(t, python.Config{})
	code := `
import subprocess, sys
for cmd in ([sys.executable, '-m', 'pip', 'install', 'quiver-no-such-package'], ['pip', 'install', 'quiver-no-such-package'], ['pip3', 'install', 'quiver-no-such-package']):
    try:
        print(subprocess.run(cmd, capture_output=True).returncode != 0)
    except OSError as e:
        print(type(e).__name__)
import importlib.util
print(importlib.util.find_spec('quiver_no_such_package') is None)
`
	res := run(t, r, sandbox.Job{Code: code})
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		if line != "True" && line != "FileNotFoundError" {
			t.Errorf("a pip install may have worked: %q in\n%s", line, res.Stdout)
		}
	}
	if res.Error != "" {
		t.Errorf("error: %s", res.Error)
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name  string
		cfg   python.Config
		lim   sandbox.Limits
		code  string
		stop  sandbox.Stop
		check func(t *testing.T, res sandbox.Result)
	}{
		{
			name: "loop forever", lim: sandbox.Limits{Wall: 300 * time.Millisecond},
			code: "while True: pass", stop: sandbox.StopWall,
		},
		{
			name: "CPU time", cfg: python.Config{CPU: time.Second}, lim: sandbox.Limits{Wall: 30 * time.Second},
			code: "while True: pass", stop: sandbox.StopCPU,
		},
		{
			name: "allocate past the limit", lim: sandbox.Limits{MemoryBytes: 128 << 20},
			code: "x = bytearray(256 << 20); print('allocated')", stop: sandbox.StopMemory,
		},
		{
			name: "print gigabytes", lim: sandbox.Limits{OutputBytes: 1000},
			code: "import sys\nwhile True: sys.stdout.write('x' * 65536)", stop: sandbox.StopOutput,
			check: func(t *testing.T, res sandbox.Result) {
				if len(res.Stdout) != 1000 || !res.Truncated {
					t.Errorf("stdout is %d bytes, truncated %v; want 1000, true", len(res.Stdout), res.Truncated)
				}
			},
		},
		{
			name: "print gigabytes to stderr", lim: sandbox.Limits{OutputBytes: 1000},
			code: "import sys\nwhile True: sys.stderr.write('x' * 65536)", stop: sandbox.StopOutput,
		},
		{
			name: "fork in a loop", cfg: python.Config{Processes: 8},
			code: `import os, time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as e:
    print('refused after', n < 8)`,
			check: func(t *testing.T, res sandbox.Result) {
				if res.Stdout != "refused after True\n" {
					t.Errorf("stdout = %q; want the forks refused under 8 processes", res.Stdout)
				}
			},
		},
		{
			name: "one file past the size limit",
			code: "try:\n    with open('big', 'wb') as f: f.write(b'x' * (" + strconv.Itoa(sandbox.MaxWriteBytes) + " + 1))\nexcept OSError as e:\n    print(e.errno)",
			check: func(t *testing.T, res sandbox.Result) {
				if res.Stdout != "27\n" { // EFBIG
					t.Errorf("stdout = %q; want EFBIG", res.Stdout)
				}
			},
		},
		{
			name: "fill the scratch space", cfg: python.Config{ScratchBytes: 1 << 20},
			code: "try:\n    with open('/tmp/big', 'wb') as f: f.write(b'x' * (2 << 20))\nexcept OSError as e:\n    print(e.errno)",
			check: func(t *testing.T, res sandbox.Result) {
				if res.Stdout != "28\n" { // ENOSPC
					t.Errorf("stdout = %q; want ENOSPC", res.Stdout)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRunner(t, tt.cfg)
			res := run(t, r, sandbox.Job{Code: tt.code, Limits: tt.lim})
			if res.Stop != tt.stop {
				t.Errorf("Stop = %q; want %q (Result %+v)", res.Stop, tt.stop, res)
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}

// A process the script leaves behind, even in a session of its own,
// is gone when Run returns: it ran in the sandbox's PID namespace.
func TestNothingLeftBehind(t *testing.T) {
	r := newRunner(t, python.Config{})
	marker := "quiver-sandbox-leftover-" + strconv.Itoa(os.Getpid())
	for _, tt := range []struct {
		name string
		lim  sandbox.Limits
		tail string
	}{
		{"the script ends", sandbox.Limits{}, "print('spawned')"},
		{"the wall limit stops it", sandbox.Limits{Wall: 2 * time.Second}, "print('spawned', flush=True)\nwhile True: pass"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code := `import subprocess, os
subprocess.Popen(['/usr/bin/python3', '-c', 'import time; time.sleep(600)', '` + marker + `'], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/usr/bin/python3', ['/usr/bin/python3', '-c', 'import time; time.sleep(600)', '` + marker + `'])
    os._exit(0)
` + tt.tail
			res := run(t, r, sandbox.Job{Code: code, Limits: tt.lim})
			if !strings.HasPrefix(res.Stdout, "spawned\n") {
				t.Fatalf("Result = %+v", res)
			}
			if pids := withArg(t, marker); len(pids) > 0 {
				t.Errorf("processes left behind: %v", pids)
			}
		})
	}
}

// withArg lists the host's processes with arg on their command line.
func withArg(t *testing.T, arg string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), arg) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
