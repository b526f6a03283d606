package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// skillCases checks the Skills repository.
func skillCases() []suiteCase {
	return []suiteCase{
		{"AddReplace", testSkillAddReplace},
		{"List", testSkillList},
		{"RemoveDetaches", testSkillRemove},
		{"AttachDetach", testSkillAttach},
		{"CapsRefused", testSkillCaps},
		{"OrgCap", testSkillOrgCap},
		{"ConcurrentOrgCap", testSkillConcurrentCap},
		{"Isolation", testSkillIsolation},
		{"DeleteAgentDetaches", testSkillDeleteAgent},
	}
}

// newSkill returns an unstored skill of the fixture's "org" with files
// at paths, each holding its path.
func (f *fixture) newSkill(name string, paths ...string) store.Skill {
	sk := store.Skill{OrgID: f.id("org"), Name: name, Description: "Use " + name + " when asked.",
		Document: "---\nname: " + name + "\ndescription: Use " + name + " when asked.\n---\n# " + name + "\n", UpdatedAt: at(1)}
	for _, p := range paths {
		sk.Files = append(sk.Files, store.SkillFile{Path: p, Data: []byte("content of " + p)})
	}
	return sk
}

// mustPutSkill stores sk or fails.
func (f *fixture) mustPutSkill(t *testing.T, sk store.Skill) store.Skill {
	t.Helper()
	got, err := f.PutSkill(t.Context(), sk)
	if err != nil {
		t.Fatalf("PutSkill(%s): %v", sk.Name, err)
	}
	return got
}

// skillNames returns the names of sks.
func skillNames(sks []store.Skill) []string {
	out := []string{}
	for _, s := range sks {
		out = append(out, s.Name)
	}
	return out
}

func testSkillAddReplace(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.id("org")
	put := f.mustPutSkill(t, f.newSkill("pdf", "scripts/fill.py", "reference.md"))
	want := store.Skill{OrgID: org, Name: "pdf", Description: "Use pdf when asked.", Document: put.Document,
		Files:     []store.SkillFile{{Path: "reference.md", Size: 23}, {Path: "scripts/fill.py", Size: 26}},
		FileCount: 2, FileBytes: 49, CreatedAt: at(1), UpdatedAt: at(1)}
	if d := diff(want, put); d != "" {
		t.Errorf("PutSkill returned (-want +got):\n%s", d)
	}
	got, err := f.GetSkill(ctx, org, "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(want, got); d != "" {
		t.Errorf("GetSkill (-want +got):\n%s", d)
	}
	wantUTC(t, "GetSkill", got.CreatedAt, got.UpdatedAt)
	file, err := f.ReadSkillFile(ctx, org, "pdf", "scripts/fill.py")
	if err != nil || string(file.Data) != "content of scripts/fill.py" || file.Size != 26 {
		t.Errorf("ReadSkillFile = %+v, %v", file, err)
	}
	if err := f.AttachSkill(ctx, org, "helper", "pdf", at(2)); err != nil {
		t.Fatal(err)
	}
	next := f.newSkill("pdf", "forms.md")
	next.Description, next.Document, next.UpdatedAt = "New text.", "---\nname: pdf\n---\nnew", at(5)
	next.Files[0].Data = []byte{0, 1, 2, 0xff}
	f.mustPutSkill(t, next)
	got, err = f.GetSkill(ctx, org, "pdf")
	want = store.Skill{OrgID: org, Name: "pdf", Description: "New text.", Document: next.Document,
		Files: []store.SkillFile{{Path: "forms.md", Size: 4}}, FileCount: 1, FileBytes: 4, CreatedAt: at(1), UpdatedAt: at(5)}
	if d := diff(want, got); err != nil || d != "" {
		t.Errorf("after a replace (-want +got):\n%s %v", d, err)
	}
	if file, err := f.ReadSkillFile(ctx, org, "pdf", "forms.md"); err != nil || !bytes.Equal(file.Data, []byte{0, 1, 2, 0xff}) {
		t.Errorf("the binary file reads %v, %v", file.Data, err)
	}
	_, err = f.ReadSkillFile(ctx, org, "pdf", "reference.md")
	wantNotFound(t, "a file the replace dropped", err)
	if sks, err := f.AgentSkills(ctx, org, "helper"); err != nil || diff([]string{"pdf"}, skillNames(sks)) != "" {
		t.Errorf("the replace dropped the attachment: %v, %v", skillNames(sks), err)
	}
}

func testSkillList(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.id("org")
	if sks, err := f.ListSkills(ctx, org); err != nil || len(sks) != 0 {
		t.Fatalf("ListSkills of an empty organisation = %v, %v", skillNames(sks), err)
	}
	f.mustPutSkill(t, f.newSkill("bare"))
	for _, name := range []string{"zeta", "alpha", "mid-1"} {
		f.mustPutSkill(t, f.newSkill(name, "a.txt"))
	}
	sks, err := f.ListSkills(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff([]string{"alpha", "bare", "mid-1", "zeta"}, skillNames(sks)); d != "" {
		t.Fatalf("ListSkills order (-want +got):\n%s", d)
	}
	if sks[1].FileCount != 0 || sks[1].FileBytes != 0 {
		t.Errorf("a skill without files lists %d files of %d bytes", sks[1].FileCount, sks[1].FileBytes)
	}
	sks = slices.Delete(sks, 1, 2)
	for _, s := range sks {
		if s.Document != "" || s.Files != nil || s.FileCount != 1 || s.FileBytes != 16 {
			t.Errorf("listed skill %s: document %q, files %+v, %d files of %d bytes", s.Name, s.Document, s.Files, s.FileCount, s.FileBytes)
		}
	}
}

func testSkillRemove(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.id("org")
	f.mustPutSkill(t, f.newSkill("gone", "x.md"))
	f.mustPutSkill(t, f.newSkill("kept"))
	for _, a := range []string{"one", "two"} {
		for _, s := range []string{"gone", "kept"} {
			if err := f.AttachSkill(ctx, org, a, s, at(2)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.DeleteSkill(ctx, org, "gone"); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "a second DeleteSkill", f.DeleteSkill(ctx, org, "gone"))
	_, err := f.GetSkill(ctx, org, "gone")
	wantNotFound(t, "a deleted skill", err)
	_, err = f.ReadSkillFile(ctx, org, "gone", "x.md")
	wantNotFound(t, "a deleted skill's file", err)
	for _, a := range []string{"one", "two"} {
		if sks, err := f.AgentSkills(ctx, org, a); err != nil || diff([]string{"kept"}, skillNames(sks)) != "" {
			t.Errorf("agent %s after the delete: %v, %v", a, skillNames(sks), err)
		}
	}
	// Adding the name again attaches it nowhere.
	f.mustPutSkill(t, f.newSkill("gone"))
	if sks, _ := f.AgentSkills(ctx, org, "one"); diff([]string{"kept"}, skillNames(sks)) != "" {
		t.Errorf("a skill added again came back attached: %v", skillNames(sks))
	}
}

func testSkillAttach(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.id("org")
	wantNotFound(t, "attaching an unknown skill", f.AttachSkill(ctx, org, "helper", "nope", at(1)))
	f.mustPutSkill(t, f.newSkill("b-skill"))
	f.mustPutSkill(t, f.newSkill("a-skill"))
	for range 2 {
		for _, s := range []string{"b-skill", "a-skill"} {
			if err := f.AttachSkill(ctx, org, "helper", s, at(2)); err != nil {
				t.Fatalf("AttachSkill(%s): %v", s, err)
			}
		}
	}
	if sks, err := f.AgentSkills(ctx, org, "helper"); err != nil || diff([]string{"a-skill", "b-skill"}, skillNames(sks)) != "" {
		t.Errorf("AgentSkills = %v, %v", skillNames(sks), err)
	}
	if sks, _ := f.AgentSkills(ctx, org, "other"); len(sks) != 0 {
		t.Errorf("another agent has skills: %v", skillNames(sks))
	}
	for _, agent := range []string{"", strings.Repeat("a", store.MaxSkillAgentBytes+1)} {
		if err := f.AttachSkill(ctx, org, agent, "a-skill", at(2)); !errors.Is(err, store.ErrSkillInvalid) {
			t.Errorf("AttachSkill to agent %.10q = %v, want ErrSkillInvalid", agent, err)
		}
	}
	if err := f.DetachSkill(ctx, org, "helper", "b-skill"); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "detaching again", f.DetachSkill(ctx, org, "helper", "b-skill"))
	if sks, _ := f.AgentSkills(ctx, org, "helper"); diff([]string{"a-skill"}, skillNames(sks)) != "" {
		t.Errorf("after the detach: %v", skillNames(sks))
	}
	if _, err := f.GetSkill(ctx, org, "b-skill"); err != nil {
		t.Errorf("a detached skill is gone: %v", err)
	}
	if n, err := f.DeleteAgentSkills(ctx, org, "helper"); err != nil || n != 1 {
		t.Errorf("DeleteAgentSkills = %d, %v; want 1", n, err)
	}
}

func testSkillCaps(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.id("org")
	big := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	withFiles := func(n, size int) []store.SkillFile {
		out := make([]store.SkillFile, n)
		for i := range out {
			out[i] = store.SkillFile{Path: fmt.Sprintf("f%03d.txt", i), Data: big(size)}
		}
		return out
	}
	// A skill stored first, which each refused replace must leave as it is.
	kept := f.mustPutSkill(t, f.newSkill("kept", "a.txt"))
	tests := []struct {
		name   string
		edit   func(*store.Skill)
		target error
	}{
		{"DocumentTooLarge", func(s *store.Skill) { s.Document = string(big(store.MaxSkillDocumentBytes + 1)) }, store.ErrSkillQuota},
		{"TooManyFiles", func(s *store.Skill) { s.Files = withFiles(store.MaxSkillFiles+1, 1) }, store.ErrSkillQuota},
		{"FileTooLarge", func(s *store.Skill) { s.Files = withFiles(1, store.MaxSkillFileBytes+1) }, store.ErrSkillQuota},
		{"TotalTooLarge", func(s *store.Skill) {
			s.Files = withFiles(store.MaxSkillTotalBytes/store.MaxSkillFileBytes+1, store.MaxSkillFileBytes)
		}, store.ErrSkillQuota},
		{"ParentPath", func(s *store.Skill) { s.Files = []store.SkillFile{{Path: "../x"}} }, store.ErrSkillInvalid},
		{"AbsolutePath", func(s *store.Skill) { s.Files = []store.SkillFile{{Path: "/etc/passwd"}} }, store.ErrSkillInvalid},
		{"ReservedPath", func(s *store.Skill) { s.Files = []store.SkillFile{{Path: "docs/CON.txt"}} }, store.ErrSkillInvalid},
		{"SkillMDPath", func(s *store.Skill) { s.Files = []store.SkillFile{{Path: "SKILL.md"}} }, store.ErrSkillInvalid},
		{"DuplicatePath", func(s *store.Skill) { s.Files = []store.SkillFile{{Path: "a"}, {Path: "a"}} }, store.ErrSkillInvalid},
		{"DescriptionTooLong", func(s *store.Skill) { s.Description = string(big(store.MaxSkillDescriptionRunes + 1)) }, store.ErrSkillInvalid},
		{"EmptyDocument", func(s *store.Skill) { s.Document = " " }, store.ErrSkillInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{"fresh", "kept"} {
				sk := f.newSkill(name, "a.txt")
				tc.edit(&sk)
				if _, err := f.PutSkill(ctx, sk); !errors.Is(err, tc.target) {
					t.Errorf("PutSkill(%s) = %v, want %v", name, err, tc.target)
				}
			}
			_, err := f.GetSkill(ctx, org, "fresh")
			wantNotFound(t, "a refused skill", err)
			if got, err := f.GetSkill(ctx, org, "kept"); err != nil || diff(kept, got) != "" {
				t.Errorf("a refused replace changed the skill: %s %v", diff(kept, got), err)
			}
		})
	}
	sk := f.newSkill("Bad_Name")
	if _, err := f.PutSkill(ctx, sk); !errors.Is(err, store.ErrSkillInvalid) {
		t.Errorf("PutSkill(Bad_Name) = %v, want ErrSkillInvalid", err)
	}
	// At the bounds exactly, a skill is stored.
	edge := f.newSkill("edge")
	edge.Document = string(big(store.MaxSkillDocumentBytes))
	edge.Files = withFiles(store.MaxSkillTotalBytes/store.MaxSkillFileBytes, store.MaxSkillFileBytes)
	if got := f.mustPutSkill(t, edge); got.FileBytes != store.MaxSkillTotalBytes {
		t.Errorf("the edge skill holds %d bytes, want %d", got.FileBytes, store.MaxSkillTotalBytes)
	}
}

func testSkillOrgCap(t *testing.T, f *fixture) {
	ctx := t.Context()
	for i := range store.MaxSkillsPerOrg {
		f.mustPutSkill(t, f.newSkill(fmt.Sprintf("s%03d", i)))
	}
	if _, err := f.PutSkill(ctx, f.newSkill("one-more")); !errors.Is(err, store.ErrSkillQuota) {
		t.Errorf("PutSkill past MaxSkillsPerOrg = %v, want ErrSkillQuota", err)
	}
	_, err := f.GetSkill(ctx, f.id("org"), "one-more")
	wantNotFound(t, "the refused skill", err)
	// A replace is not an addition.
	f.mustPutSkill(t, f.newSkill("s000", "new.txt"))
	// Another organisation has its own count.
	other := f.newSkill("one-more")
	other.OrgID = f.id("other")
	f.mustPutSkill(t, other)
}

func testSkillIsolation(t *testing.T, f *fixture) {
	ctx := t.Context()
	org, other := f.id("org"), f.id("other")
	f.mustPutSkill(t, f.newSkill("mine", "a.txt"))
	_, err := f.GetSkill(ctx, other, "mine")
	wantNotFound(t, "another organisation's skill", err)
	_, err = f.ReadSkillFile(ctx, other, "mine", "a.txt")
	wantNotFound(t, "another organisation's file", err)
	if sks, err := f.ListSkills(ctx, other); err != nil || len(sks) != 0 {
		t.Errorf("ListSkills of another organisation = %v, %v", skillNames(sks), err)
	}
	wantNotFound(t, "attaching another organisation's skill", f.AttachSkill(ctx, other, "helper", "mine", at(2)))
	wantNotFound(t, "deleting another organisation's skill", f.DeleteSkill(ctx, other, "mine"))
	if err := f.AttachSkill(ctx, org, "helper", "mine", at(2)); err != nil {
		t.Fatal(err)
	}
	if sks, _ := f.AgentSkills(ctx, other, "helper"); len(sks) != 0 {
		t.Errorf("the agent of that name in another organisation has %v", skillNames(sks))
	}
	wantNotFound(t, "detaching in another organisation", f.DetachSkill(ctx, other, "helper", "mine"))
	// The same name in another organisation is another skill.
	theirs := f.newSkill("mine")
	theirs.OrgID, theirs.Description = other, "Theirs."
	f.mustPutSkill(t, theirs)
	if got, err := f.GetSkill(ctx, org, "mine"); err != nil || got.Description != "Use mine when asked." || len(got.Files) != 1 {
		t.Errorf("another organisation's put changed ours: %+v, %v", got, err)
	}
	_, err = f.GetSkill(ctx, org, "bad\xff")
	wantNotFound(t, "a name that is not UTF-8", err)
}

func testSkillDeleteAgent(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.id("org")
	if err := f.PutAgent(ctx, store.StoredAgent{OrgID: org, Name: "helper", Definition: []byte("name: helper\n"), CreatedAt: at(1), UpdatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	f.mustPutSkill(t, f.newSkill("pdf"))
	for _, a := range []string{"helper", "sales"} {
		if err := f.AttachSkill(ctx, org, a, "pdf", at(2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.DeleteAgent(ctx, org, "helper"); err != nil {
		t.Fatal(err)
	}
	if sks, _ := f.AgentSkills(ctx, org, "helper"); len(sks) != 0 {
		t.Errorf("the deleted agent keeps %v", skillNames(sks))
	}
	if sks, _ := f.AgentSkills(ctx, org, "sales"); diff([]string{"pdf"}, skillNames(sks)) != "" {
		t.Errorf("another agent lost its skill: %v", skillNames(sks))
	}
	if _, err := f.GetSkill(ctx, org, "pdf"); err != nil {
		t.Errorf("deleting an agent deleted the skill: %v", err)
	}
}

func testSkillConcurrentCap(t *testing.T, f *fixture) {
	ctx := t.Context()
	for i := range store.MaxSkillsPerOrg - 2 {
		f.mustPutSkill(t, f.newSkill(fmt.Sprintf("s%03d", i)))
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = f.PutSkill(ctx, f.newSkill(fmt.Sprintf("race-%d", i), "a.txt"))
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrSkillQuota):
			t.Errorf("a racing put: %v", err)
		}
	}
	list, err := f.ListSkills(ctx, f.id("org"))
	if err != nil {
		t.Fatal(err)
	}
	if ok != 2 || len(list) != store.MaxSkillsPerOrg {
		t.Errorf("%d racing puts succeeded and %d skills are stored; want 2 and %d", ok, len(list), store.MaxSkillsPerOrg)
	}
}
