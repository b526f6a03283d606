package workspace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/quiverhq/quiver/internal/texttree"
)

// benchFiles is the size of the benchmark workspace (internal/texttree:
// one file in 400 holds the needle, one in 1,000 the marker, so a search
// finds fewer matches than the limit and must read every file, as ripgrep
// does).
const benchFiles = 20_000

// BenchmarkSearchFiles runs search_files over a 20,000-file workspace, and
// ripgrep over the same tree with equivalent flags (fixed strings, same
// context, same size cap, hidden and ignored files included, grouped by
// file), so the two can be compared as a ratio. The ripgrep half is skipped
// when rg is not installed.
func BenchmarkSearchFiles(b *testing.B) {
	e := newEnv(b, Config{Root: b.TempDir()})
	if err := texttree.Write(e.dir(), benchFiles); err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name    string
		queries []string
		fold    bool
		context int
	}{
		{name: "one_string", queries: []string{texttree.Needle}},
		{name: "three_strings_icase_ctx1", queries: []string{"QUIVER_NEEDLE", "zebra_marker", "absent_word"}, fold: true, context: 1},
	}
	for _, c := range cases {
		args := jsonArgs(b, searchIn{Queries: c.queries, CaseInsensitive: c.fold, Context: c.context})
		b.Run(c.name+"/quiver", func(b *testing.B) {
			for b.Loop() {
				out, err := e.call("search_files", args)
				if err != nil || strings.Contains(out, "more were cut") {
					b.Fatalf("search_files: %v\n%.200s", err, out)
				}
			}
		})
		b.Run(c.name+"/ripgrep", func(b *testing.B) {
			rg, err := exec.LookPath("rg")
			if err != nil {
				b.Skip("rg not installed")
			}
			flags := rgFlags(c.queries, c.fold, c.context, e.dir())
			for b.Loop() {
				cmd := exec.Command(rg, flags...)
				cmd.Stdout = io.Discard
				var exit *exec.ExitError
				if err := cmd.Run(); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
					b.Fatalf("rg: %v", err)
				}
			}
		})
	}
}

// rgFlags are the ripgrep flags equivalent to a search_files call.
func rgFlags(queries []string, fold bool, context int, dir string) []string {
	flags := []string{"--no-config", "--fixed-strings", "--hidden", "--no-ignore", "--max-filesize", "1M",
		"--heading", "--line-number", "--context", fmt.Sprint(context)}
	if fold {
		flags = append(flags, "--ignore-case")
	}
	for _, q := range queries {
		flags = append(flags, "-e", q)
	}
	return append(flags, dir)
}

// Deep chains for the quota benchmarks: capChains chains of capDepth
// nested folders, capChains*capDepth folders in all, which is the folder
// cap (DefaultMaxFiles); each chain's deepest folder holds one file.
const (
	capChains = 200 // chains of 50, within the 64 folders the tools write
	capDepth  = DefaultMaxFiles / capChains
)

// deepChains fills dir with capChains chains of capDepth folders
// ("cNN/d/d/…/d", under 1,024 bytes each, as the tools accept).
func deepChains(b *testing.B, dir string) {
	b.Helper()
	for c := range capChains {
		p := filepath.Join(dir, fmt.Sprintf("c%02d", c), strings.Repeat("d/", capDepth-1))
		if err := os.MkdirAll(p, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "leaf.txt"), []byte("leaf\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteOneByte writes one byte to one file at the top of an
// empty workspace and of one at the folder cap in deep chains: the quota
// accounting must cost the same in both.
func BenchmarkWriteOneByte(b *testing.B) {
	for _, c := range []struct {
		name string
		fill func(b *testing.B, dir string)
	}{
		{"empty", func(*testing.B, string) {}},
		{"folder_cap_deep_chains", deepChains},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b, Config{Root: b.TempDir()})
			c.fill(b, e.dir())
			args := jsonArgs(b, writeIn{Files: []fileIn{{Path: "x.txt", Content: "x"}}})
			// The first write in a workspace measures it
			// (BenchmarkMeasureFolderCap). Flushing the setup's folders
			// first keeps their writeback out of the fsyncs timed.
			if _, err := e.call("write_file", args); err != nil {
				b.Fatal(err)
			}
			syscall.Sync()
			for b.Loop() {
				if _, err := e.call("write_file", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListFilesFolderCap lists a workspace at the folder cap in deep
// chains: list_files shows its first 500 entries.
func BenchmarkListFilesFolderCap(b *testing.B) {
	e := newEnv(b, Config{Root: b.TempDir()})
	deepChains(b, e.dir())
	for b.Loop() {
		if _, err := e.call("list_files", `{}`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMeasureFolderCap measures a workspace at the folder cap in deep
// chains, as the first write does and a write after one that failed or
// died (usage.go).
func BenchmarkMeasureFolderCap(b *testing.B) {
	e := newEnv(b, Config{Root: b.TempDir()})
	deepChains(b, e.dir())
	w := &workspaces{cfg: Config{Root: e.root}.withDefaults()}
	root, err := w.open(e.scope)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	for b.Loop() {
		if u, err := w.measure(root); err != nil || u.folders != DefaultMaxFiles {
			b.Fatalf("measure: %+v, %v", u, err)
		}
	}
}
