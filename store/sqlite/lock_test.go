package sqlite

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLockServerOnce: a second server lock on the same data folder is
// refused, naming the holder, until the first is released. flock locks
// belong to open files, so two opens in one process conflict as two
// processes do.
func TestLockServerOnce(t *testing.T) {
	dir := t.TempDir()
	release, err := LockServer(dir)
	if err != nil {
		t.Fatalf("first lock: %v", err)
	}
	_, err = LockServer(dir)
	if !errors.Is(err, ErrServerRunning) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock = %v, want ErrServerRunning naming this process", err)
	}
	release()
	again, err := LockServer(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again()
}
