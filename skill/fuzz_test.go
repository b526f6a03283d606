package skill_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/skill"
	"github.com/quiverhq/quiver/store"
)

// at stamps bundles in tests.
var at = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// FuzzParseDocument: any input is parsed or refused with an error of the
// store's kinds, never a panic; what parses is a name and description the
// store accepts.
func FuzzParseDocument(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "folders", "*", "SKILL.md"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("---\nname: a\ndescription: b\n---\n"))
	f.Add([]byte("---\nname: a\ndescription: b\nmetadata: {x: [1]}\nallowed-tools: [a, {b: c}]\n---"))
	f.Add([]byte("---\n&a [*a, *a]\n---\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, _, err := skill.ParseDocument(doc)
		if err != nil {
			if !errors.Is(err, store.ErrSkillInvalid) && !errors.Is(err, store.ErrSkillQuota) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		b := skill.Bundle{Meta: m, Document: string(doc)}
		if _, err := store.CheckSkill(b.Record("org", at)); err != nil && !bytes.Contains(doc, []byte{0}) {
			t.Fatalf("parsed, but the store refuses it: %v", err)
		}
	})
}

// FuzzReadZip: any bytes are read as a skill or refused, never a panic;
// a skill read passes the store's checks, and no file path leaves the
// folder.
func FuzzReadZip(f *testing.F) {
	f.Add(zipOf(f, [2]string{"SKILL.md", zipDoc}, [2]string{"docs/a.md", "a"}))
	f.Add(zipOf(f, [2]string{"notes/SKILL.md", zipDoc}, [2]string{"notes/x", "x"}))
	f.Add(zipOf(f, [2]string{"SKILL.md", zipDoc}, [2]string{"../x", "x"}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := skill.ReadZip(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if _, err := store.CheckSkill(b.Record("org", at)); err != nil {
			t.Fatalf("read, but the store refuses it: %v", err)
		}
		for _, file := range b.Files {
			if strings.HasPrefix(file.Path, "/") || strings.Contains("/"+file.Path+"/", "/../") {
				t.Fatalf("path %q leaves the folder", file.Path)
			}
		}
	})
}
