package skill_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
