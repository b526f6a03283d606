// Package python is run_code's process isolation level: it runs a Python 3
// script in a separate process under bubblewrap (bwrap, Debian package
// bubblewrap), with the system interpreter (/usr/bin/python3 by default)
// and whatever of Debian's python3-numpy, python3-pandas and
// python3-matplotlib is installed.
//
// # What it guarantees
//
// Each Run starts one bwrap with:
//
//   - new user, PID, IPC, UTS, cgroup and network namespaces
//     (--unshare-all, never --share-net): the network namespace holds only
//     a loopback interface that is down, so no socket reaches anything
//     (TCP, UDP or a Unix socket of the host) and no name resolves;
//   - a file system of read-only binds of /usr and the /bin, /lib*, /sbin
//     links or folders that lead into it, a fresh /proc of the new PID
//     namespace, a minimal /dev, and two size-limited tmpfs mounts, /tmp
//     and the workspace /workspace, the only places it can write. No /etc
//     (no passwd, no resolv.conf, no keys), no /home, /root, /var or /srv:
//     the server's data folder and configuration are not in it;
//   - an empty environment (--clearenv) but PATH, HOME=/tmp, LANG,
//     MPLBACKEND=Agg and thread counts of 1 for the numeric libraries:
//     none of the server's variables (keys, tokens) is visible;
//   - --die-with-parent and --new-session: the sandbox dies with the
//     server and cannot reach its terminal;
//   - when the server runs as root, bwrap itself runs as an unprivileged
//     user (Config.UID, 65534 "nobody" by default), so the sandbox holds
//     no privilege of the host's root and RLIMIT_NPROC applies (the kernel
//     exempts root from it).
//
// The workspace is reached through sandbox.Workspace, not mounted: the
// workspace's files (at most Config.CopyBytes in all) are copied into
// /workspace, the script's working folder, and when the script ends the
// files it created or changed there are written back through the
// Workspace, so the workspace's own path checks and quotas apply to each.
// A file the script deletes is not deleted from the workspace; files are
// written back only when the script ends by itself (finishing, raising,
// exiting), not when a limit stops it.
//
// Before the script, a boot script in the same process sets rlimits that
// hold for it and everything it starts: CPU seconds (Config.CPU, default
// the wall limit), address space (Limits.MemoryBytes; zero means
// DefaultMemoryBytes, as numpy, pandas and matplotlib need room),
// processes and threads (Config.Processes), the size of one file
// (sandbox.MaxWriteBytes) and open files. /workspace and /tmp are
// tmpfs mounts of bounded size. stdout and stderr share one pipe, read
// up to Limits.OutputBytes; past it, or at the wall limit, or when the
// context ends, bwrap is killed, and Run waits until the sandbox's PID
// namespace is gone, so no process the script started outlives Run.
//
// # What it does not
//
//   - No cgroups: memory is bounded per process (address space), so a
//     script may use at most Processes × MemoryBytes in all, and CPU time
//     Processes × CPU within the wall limit.
//   - pip install and every other way to add packages fail: there is no
//     network, and the system is read-only.
package python

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/quiverhq/quiver/sandbox"
)

//go:embed boot.py
var bootPy string

// Defaults of Config's zero fields, and of Limits.MemoryBytes.
const (
	DefaultBwrap       = "bwrap"
	DefaultPython      = "/usr/bin/python3"
	DefaultProcesses   = 32
	DefaultCopyBytes   = 64 << 20
	DefaultScratch     = 64 << 20
	DefaultUID         = 65534
	DefaultMemoryBytes = sandbox.MaxMemoryBytes
	// maxWriteBack bounds the files one run writes back.
	maxWriteBack = 100
	// maxOpenFiles is RLIMIT_NOFILE in the sandbox.
	maxOpenFiles = 256
)

// Config says how to start the sandbox. The zero value of each field
// means its default.
type Config struct {
	// Bwrap is the bubblewrap binary, looked up in PATH; "" means "bwrap".
	Bwrap string
	// Python is the interpreter inside the sandbox, an absolute path under
	// /usr; "" means /usr/bin/python3 (the system one, not a pyenv shim).
	Python string
	// CPU bounds the CPU time of each process; zero means the job's wall
	// limit.
	CPU time.Duration
	// Processes bounds the processes and threads the script may run at
	// once; zero means 32.
	Processes int
	// CopyBytes bounds the workspace files copied in; a workspace holding
	// more is refused. Zero means 64 MiB.
	CopyBytes int64
	// ScratchBytes is the room the script has to write, on top of the
	// files copied in (and again in /tmp); zero means 64 MiB.
	ScratchBytes int64
	// UID and GID are the user bwrap runs as when the server runs as
	// root; zero means 65534 (nobody).
	UID, GID uint32
}

func (c Config) withDefaults() Config {
	if c.Bwrap == "" {
		c.Bwrap = DefaultBwrap
	}
	if c.Python == "" {
		c.Python = DefaultPython
	}
	if c.Processes <= 0 {
		c.Processes = DefaultProcesses
	}
	if c.CopyBytes <= 0 {
		c.CopyBytes = DefaultCopyBytes
	}
	if c.ScratchBytes <= 0 {
		c.ScratchBytes = DefaultScratch
	}
	if c.UID == 0 {
		c.UID = DefaultUID
	}
	if c.GID == 0 {
		c.GID = DefaultUID
	}
	return c
}

// Runner is the bubblewrap [sandbox.Runner]. It holds no state but its
// Config and is safe for concurrent use; each Run starts its own sandbox.
type Runner struct {
	cfg   Config
	bwrap string
}

var _ sandbox.Runner = (*Runner)(nil)

// New returns a Runner over cfg after checking that the level can run
// here: bwrap is found, the interpreter exists, and a sandbox starts. Its
// error says what is missing, for the tool to be left out with that
// reason ("bwrap not found (install Debian bubblewrap)").
func New(ctx context.Context, cfg Config) (*Runner, error) {
	cfg = cfg.withDefaults()
	bwrap, err := exec.LookPath(cfg.Bwrap)
	if err != nil {
		return nil, fmt.Errorf("sandbox/python: %s not found (install Debian bubblewrap)", cfg.Bwrap)
	}
	if fi, err := os.Stat(cfg.Python); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("sandbox/python: %s not found (install Debian python3)", cfg.Python)
	}
	r := &Runner{cfg: cfg, bwrap: bwrap}
	res, err := r.Run(ctx, sandbox.Job{Code: "print('ok')", Limits: sandbox.Limits{Wall: 20 * time.Second}})
	switch {
	case err != nil:
		return nil, err
	case res.Stdout != "ok\n":
		return nil, fmt.Errorf("sandbox/python: bwrap cannot start a sandbox here (it needs user namespaces): %s", firstLine(res.Error))
	}
	return r, nil
}

// Run validates job, runs it in a new sandbox and reports. The error is
// non-nil for an invalid job, a workspace too large to copy in, a sandbox
// that could not be started or set up, or a ctx that ended first.
func (r *Runner) Run(ctx context.Context, job sandbox.Job) (sandbox.Result, error) {
	if err := job.Validate(); err != nil {
		return sandbox.Result{}, err
	}
	start := time.Now()
	lim := job.Limits
	if lim.MemoryBytes == 0 {
		lim.MemoryBytes = DefaultMemoryBytes
	}
	lim = lim.WithDefaults()
	in, refused, err := r.input(job, lim)
	if err != nil || refused != "" {
		return sandbox.Result{Error: refused, Elapsed: time.Since(start)}, err
	}
	p := &proc{r: r, lim: lim, in: in}
	out, err := p.run(ctx)
	if err != nil {
		return sandbox.Result{}, err
	}
	res := p.report(ctx, out, job.Workspace)
	res.Elapsed = time.Since(start)
	if ctx.Err() != nil {
		return res, fmt.Errorf("sandbox/python: run: %w", context.Cause(ctx))
	}
	return res, nil
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
