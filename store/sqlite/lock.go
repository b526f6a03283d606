package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFileName is the file in the data directory that a server process
// holds locked while it runs (see LockServer).
const LockFileName = "quiver.db.server-lock"

// ErrServerRunning reports that another process already serves the
// database in a data directory.
var ErrServerRunning = errors.New("another quiver server is running on this SQLite database")

// LockServer takes the data directory's server lock for this process, and
// returns the function that releases it. SQLite serves one server
// process: its writes are serialised in that process, and what a server
// keeps in memory (running turns, their streams) is not shared, so a
// second `quiver serve` on the same files would run beside the first
// without seeing it. A second LockServer on dir, from any process, fails
// with ErrServerRunning, naming the holder's process id, until the first
// releases it or its process ends (the lock is an flock, which the
// kernel drops with the process). Other commands (quiver call, turn, ...)
// do not take it: they are short and SQLite's own locking covers them.
func LockServer(dir string) (release func(), err error) {
	if _, err := prepareDir(dir); err != nil {
		return nil, fmt.Errorf("sqlite: lock: %w", err)
	}
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (process %s holds %s)", ErrServerRunning, holder, path)
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	// The holder's pid, for the message a second server prints.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// readHolder is the process id the lock file records, or "unknown".
func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid := strings.TrimSpace(string(b[:n])); pid != "" {
		return pid
	}
	return "unknown"
}
