package python

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quiverhq/quiver/sandbox"
)

// proc is one sandbox process: its limits, its stdin and what it did.
type proc struct {
	r   *Runner
	lim sandbox.Limits
	in  stdin

	mu     sync.Mutex
	killed sandbox.Stop // why it was killed, StopNone when it was not
	cmd    *exec.Cmd
	child  int // host PID of the sandbox's PID 1, 0 until bwrap says
}

// outcome is what the process left: its output, its report and how it
// exited.
type outcome struct {
	out       []byte
	truncated bool
	report    []byte
	exit      int // bwrap's exit status: the script's, or 128+signal
}

// args are bwrap's arguments for one run (see the package doc).
func (p *proc) args() []string {
	a := []string{
		"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--clearenv",
		"--setenv", "PATH", "/usr/bin:/bin",
		"--setenv", "HOME", "/tmp",
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "MPLBACKEND", "Agg",
		"--setenv", "MPLCONFIGDIR", "/tmp/.matplotlib",
		"--setenv", "OPENBLAS_NUM_THREADS", "1",
		"--setenv", "OMP_NUM_THREADS", "1",
		"--setenv", "PYTHONDONTWRITEBYTECODE", "1",
		"--ro-bind", "/usr", "/usr",
	}
	a = append(a, systemLinks()...)
	a = append(a, etcFiles()...)
	scratch := strconv.FormatInt(p.r.cfg.ScratchBytes, 10)
	workspace := strconv.FormatInt(p.in.copied+p.r.cfg.ScratchBytes, 10)
	a = append(a,
		"--proc", "/proc", "--dev", "/dev",
		"--size", scratch, "--tmpfs", "/tmp",
		"--size", workspace, "--tmpfs", "/workspace",
		// bwrap's root is a tmpfs of no set size: read-only, so nothing
		// but the two mounts above takes a write.
		"--remount-ro", "/",
		"--chdir", "/workspace",
		"--info-fd", "4",
		"--", p.r.cfg.Python, "-I", "-u", "-c", bootPy,
	)
	return a
}

// systemLinks mounts the top-level folders that hold programs and
// libraries besides /usr: as the symbolic links into /usr they are on a
// merged-/usr system, else read-only.
func systemLinks() []string {
	var a []string
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	return a
}

// etcReadable are the only entries of /etc the sandbox sees, read-only
// and only where they exist: the dynamic linker's cache, Debian's
// matplotlib settings (Debian keeps matplotlibrc there), fontconfig's
// settings, and Debian's
// alternatives links, through which numpy finds its BLAS library. Neither
// holds anything secret: no passwd, shadow, hosts or resolv.conf.
var etcReadable = []string{"/etc/ld.so.cache", "/etc/alternatives", "/etc/matplotlibrc", "/etc/fonts"}

func etcFiles() []string {
	var a []string
	for _, p := range etcReadable {
		if _, err := os.Stat(p); err == nil {
			a = append(a, "--ro-bind", p, p)
		}
	}
	return a
}

// run starts the sandbox, feeds it, reads it and waits until it and every
// process it started are gone.
func (p *proc) run(ctx context.Context) (outcome, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return outcome{}, fmt.Errorf("sandbox/python: pipe: %w", err)
	}
	defer outR.Close()
	repR, repW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return outcome{}, fmt.Errorf("sandbox/python: pipe: %w", err)
	}
	defer repR.Close()
	infoR, infoW, err := os.Pipe()
	if err != nil {
		outW.Close()
		repW.Close()
		return outcome{}, fmt.Errorf("sandbox/python: pipe: %w", err)
	}
	defer infoR.Close()

	cmd := exec.Command(p.r.bwrap, p.args()...)
	cmd.Env = []string{}
	cmd.Stdin = bytes.NewReader(p.in.data)
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{repW, infoW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: p.r.cfg.UID, Gid: p.r.cfg.GID, NoSetGroups: false}
	}
	p.cmd = cmd
	err = cmd.Start()
	outW.Close()
	repW.Close()
	infoW.Close()
	if err != nil {
		return outcome{}, fmt.Errorf("sandbox/python: start bwrap: %w", err)
	}
	return p.watch(ctx, outR, repR, infoR)
}

// watch reads the pipes while the sandbox runs, kills it at a limit, and
// returns once it is gone.
func (p *proc) watch(ctx context.Context, outR, repR, infoR *os.File) (outcome, error) {
	var o outcome
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); p.readInfo(infoR) }()
	go func() {
		defer wg.Done()
		o.out, o.truncated = readCapped(outR, p.lim.OutputBytes, func() { p.kill(sandbox.StopOutput) })
	}()
	go func() {
		defer wg.Done()
		var over bool
		o.report, over = readCapped(repR, int(p.in.copied+2*p.r.cfg.ScratchBytes)+1<<20, func() {})
		if over {
			o.report = nil
		}
	}()
	wall := time.AfterFunc(p.lim.Wall, func() { p.kill(sandbox.StopWall) })
	stop := context.AfterFunc(ctx, func() { p.kill(sandbox.StopCancelled) })
	werr := p.cmd.Wait()
	wall.Stop()
	stop()
	p.kill(sandbox.StopNone) // bwrap is gone: end its PID namespace too
	wg.Wait()
	p.awaitChild()
	var exit *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &exit):
		o.exit = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.exit = 128 + int(ws.Signal())
		}
	default:
		return o, fmt.Errorf("sandbox/python: wait for bwrap: %w", werr)
	}
	return o, nil
}

// readInfo reads bwrap's --info-fd JSON, which names the host PID of the
// sandbox's PID 1.
func (p *proc) readInfo(r io.Reader) {
	var info struct {
		Child int `json:"child-pid"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 4<<10)).Decode(&info); err != nil || info.Child <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.child = info.Child
	if p.killed != sandbox.StopNone {
		unix.Kill(p.child, unix.SIGKILL)
	}
}

// kill records why the sandbox is stopped (the first reason wins) and
// kills bwrap's process group and the sandbox's PID 1, which takes every
// process of its PID namespace with it. StopNone kills without a reason:
// the clean-up after bwrap exited.
func (p *proc) kill(why sandbox.Stop) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killed == sandbox.StopNone {
		p.killed = why
	}
	if p.cmd.Process != nil {
		unix.Kill(-p.cmd.Process.Pid, unix.SIGKILL)
	}
	if p.child > 0 {
		unix.Kill(p.child, unix.SIGKILL)
	}
}

// awaitChild waits until the sandbox's PID 1 has exited: the kernel ends
// a PID namespace's other processes before its PID 1 is gone, so after
// it nothing the script started is left. The PID is not our child (bwrap
// is its parent), so it is watched through a pidfd.
func (p *proc) awaitChild() {
	p.mu.Lock()
	child := p.child
	p.mu.Unlock()
	if child <= 0 {
		return
	}
	fd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		return // already reaped: gone
	}
	defer unix.Close(fd)
	unix.Kill(child, unix.SIGKILL)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err == nil || !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// readCapped reads r to its end, keeping at most limit bytes; over
// reports that there was more. Then onOver runs (it kills the writer) and
// the rest is read and dropped until the pipe ends.
func readCapped(r io.Reader, limit int, onOver func()) (data []byte, over bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	var b bytes.Buffer
	n, _ := io.Copy(&b, io.LimitReader(br, int64(limit)+1))
	if n > int64(limit) {
		over = true
		b.Truncate(limit)
		onOver()
		io.Copy(io.Discard, br)
	}
	return b.Bytes(), over
}
