package replicatest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// EnvBinary names a quiver binary to run instead of building one (for a
// run that built it already, or to test a release build).
const EnvBinary = "QUIVER_TEST_QUIVER"

// mainPackage is the command the harness builds.
const mainPackage = "github.com/quiverhq/quiver/cmd/quiver"

// staleAfter is how long a cached binary no test used is kept.
const staleAfter = 7 * 24 * time.Hour

// built is the test binary's one build of quiver.
var built struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of a quiver binary built from this module's
// source tree, building it at most once per test binary. The build is
// cached in the user's cache folder under a key made of every compiled
// package the command links (go list -export): a tree that compiles to
// the same packages reuses the binary, any change to any of them builds
// anew. $QUIVER_TEST_QUIVER, when set, is used as is. A failed build
// fails t.
func Binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		if p := os.Getenv(EnvBinary); p != "" {
			built.path = p
			return
		}
		built.path, built.err = buildQuiver()
	})
	if built.err != nil {
		t.Fatalf("replicatest: build quiver: %v", built.err)
	}
	return built.path
}

// buildQuiver builds cmd/quiver into the cache, or finds it there.
func buildQuiver() (string, error) {
	gobin, err := goCommand()
	if err != nil {
		return "", err
	}
	key, err := buildKey(gobin)
	if err != nil {
		return "", err
	}
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, key)
	bin := filepath.Join(dir, "quiver")
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		_ = os.Chtimes(dir, now, now) // kept fresh for pruneCache
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cache folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "quiver-*.tmp")
	if err != nil {
		return "", fmt.Errorf("cache folder: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// Stripped (-s -w): the link is the slow part of a build, and a
	// symbol table and DWARF are what make it slow.
	if out, err := exec.Command(gobin, "build", "-ldflags=-s -w", "-o", tmp.Name(), mainPackage).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", mainPackage, err, out)
	}
	// Another test binary may have built the same key meanwhile; either
	// file is the same program, and a rename replaces atomically.
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", fmt.Errorf("cache the binary: %w", err)
	}
	pruneCache(root, key)
	return bin, nil
}

// goCommand finds the go command: on PATH, else in the toolchain that
// built this test binary.
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		return "", errors.New("no go command on PATH nor in GOROOT; set " + EnvBinary)
	}
	return p, nil
}

// buildKey hashes the go version, the environment that changes a build
// and the export file of every package cmd/quiver links: each file is
// named by the hash of its compiled content, so the key changes with any
// package's code.
func buildKey(gobin string) (string, error) {
	out, err := exec.Command(gobin, "list", "-deps", "-export", "-f", "{{.ImportPath}} {{.Export}}", mainPackage).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("go list %s: %w\n%s", mainPackage, err, ee.Stderr)
		}
		return "", fmt.Errorf("go list %s: %w", mainPackage, err)
	}
	env, err := exec.Command(gobin, "env", "GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	h := sha256.New()
	h.Write(env)
	h.Write([]byte("-ldflags=-s -w\n"))
	h.Write(bytes.TrimSpace(out))
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// cacheRoot is the folder of the cached binaries.
func cacheRoot() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "quiver", "replicatest"), nil
}

// pruneCache removes the cached binaries no test used for staleAfter,
// except keep's. Errors are ignored: the cache is an optimisation.
func pruneCache(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() == keep || !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < staleAfter {
			continue
		}
		_ = os.RemoveAll(filepath.Join(root, e.Name()))
	}
}
