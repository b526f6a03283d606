package skills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quiverhq/quiver/builtin/skills"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

var at = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture is a store holding skills "pdf" (attached to helper in o1),
// "secret" (in o1, attached to no agent) and "pdf" of o2 (attached to
// helper there).
func fixture(t *testing.T) (store.Store, *tool.Tool) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	put := func(org, name, doc string, files ...store.SkillFile) {
		t.Helper()
		if _, err := st.PutSkill(ctx, store.Skill{OrgID: org, Name: name, Description: "About " + name, Document: doc, Files: files, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("é", skills.MaxPageBytes) // two bytes each
	put("o1", "pdf", "---\nname: pdf\n---\nUse forms.md.\n",
		store.SkillFile{Path: "forms.md", Data: []byte("# Forms\n")},
		store.SkillFile{Path: "long.md", Data: []byte(long)},
		store.SkillFile{Path: "logo.png", Data: []byte("\x89PNG\x00\x01")})
	put("o1", "secret", "---\nname: secret\n---\nThe secret skill.\n")
	put("o2", "pdf", "---\nname: pdf\n---\nOther organisation's.\n")
	for _, a := range [][2]string{{"o1", "pdf"}, {"o2", "pdf"}} {
		if err := st.AttachSkill(ctx, a[0], "helper", a[1], at); err != nil {
			t.Fatal(err)
		}
	}
	return st, skills.Tool(st)
}

func run(t *testing.T, tl *tool.Tool, sc tool.Scope, args string) (string, error) {
	t.Helper()
	res, err := tl.Run(context.Background(), sc, json.RawMessage(args))
	return res.Content, err
}

var helper = tool.Scope{OrgID: "o1", Agent: "helper"}

func TestLoadReturnsSkillMDAndFiles(t *testing.T) {
	_, tl := fixture(t)
	got, err := run(t, tl, helper, `{"name":"pdf"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Use forms.md.", "- forms.md (8 bytes)", "- logo.png (6 bytes)", fmt.Sprintf("- long.md (%d bytes)", 2*skills.MaxPageBytes)} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Other organisation") {
		t.Errorf("another organisation's skill was read:\n%s", got)
	}
	if got, err := run(t, tl, helper, `{"name":"pdf","path":"forms.md"}`); err != nil || !strings.Contains(got, "# Forms") {
		t.Errorf("reading forms.md: %q, %v", got, err)
	}
}

func TestLoadRefusesUnknownAndUnattachedAlike(t *testing.T) {
	_, tl := fixture(t)
	var msgs []string
	for _, c := range []struct {
		sc   tool.Scope
		args string
	}{
		{helper, `{"name":"nope"}`},
		{helper, `{"name":"secret"}`},
		{tool.Scope{OrgID: "o1", Agent: "sales"}, `{"name":"pdf"}`},
		{tool.Scope{OrgID: "o1"}, `{"name":"pdf"}`},
		{tool.Scope{OrgID: "o3", Agent: "helper"}, `{"name":"pdf"}`},
	} {
		_, err := run(t, tl, c.sc, c.args)
		if err == nil {
			t.Fatalf("%+v %s was loaded", c.sc, c.args)
		}
		msg := strings.ReplaceAll(err.Error(), `"nope"`, `"pdf"`)
		msg = strings.ReplaceAll(msg, `"secret"`, `"pdf"`)
		msgs = append(msgs, msg)
		for _, other := range []string{"forms", "About"} {
			if strings.Contains(err.Error(), other) {
				t.Errorf("the refusal reveals %q: %v", other, err)
			}
		}
	}
	for _, m := range msgs[1:] {
		if m != msgs[0] {
			t.Errorf("refusals differ:\n%s\n%s", msgs[0], m)
		}
	}
	if strings.Contains(msgs[0], "secret") {
		t.Errorf("the refusal names another skill: %s", msgs[0])
	}
}

func TestLoadPagesLongText(t *testing.T) {
	_, tl := fixture(t)
	var text strings.Builder
	offset := 0
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("paging never ends")
		}
		got, err := run(t, tl, helper, fmt.Sprintf(`{"name":"pdf","path":"long.md","offset":%d}`, offset))
		if err != nil {
			t.Fatal(err)
		}
		head, body, _ := strings.Cut(got, "\n\n")
		if len(body) > skills.MaxPageBytes {
			t.Errorf("a page of %d bytes; the limit is %d", len(body), skills.MaxPageBytes)
		}
		if !utf8.ValidString(body) {
			t.Error("a page cut inside a character")
		}
		text.WriteString(body)
		_, next, ok := strings.Cut(head, "call again with offset ")
		if !ok {
			break
		}
		fmt.Sscanf(next, "%d", &offset)
	}
	if text.String() != strings.Repeat("é", skills.MaxPageBytes) {
		t.Errorf("pages joined are %d bytes, not the file", text.Len())
	}
	if _, err := run(t, tl, helper, `{"name":"pdf","path":"long.md","offset":999999}`); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("an offset past the end: %v", err)
	}
}

func TestLoadRefusesBinaryAndMissingFiles(t *testing.T) {
	_, tl := fixture(t)
	if _, err := run(t, tl, helper, `{"name":"pdf","path":"logo.png"}`); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("a binary file: %v", err)
	}
	if _, err := run(t, tl, helper, `{"name":"pdf","path":"../secret/SKILL.md"}`); err == nil || !strings.Contains(err.Error(), "has no file") {
		t.Errorf("a path outside the skill: %v", err)
	}
}

func TestRequires(t *testing.T) {
	if got := skills.Requires(turn.Selection{}); got != "the agent has no skills attached" {
		t.Errorf("no skills: %q", got)
	}
	if got := skills.Requires(turn.Selection{Skills: []turn.Skill{{Name: "pdf"}}}); got != "" {
		t.Errorf("a skill: %q", got)
	}
}

func TestNameIsThePromptsSkillsTool(t *testing.T) {
	if skills.Name != prompt.SkillsTool || skills.Tool(nil).Spec().Name != skills.Name {
		t.Errorf("load_skill is %q, the prompt lists skills for %q", skills.Name, prompt.SkillsTool)
	}
}

func TestNoStore(t *testing.T) {
	_, err := run(t, skills.Tool(nil), helper, `{"name":"pdf"}`)
	if !tool.IsInfra(err) {
		t.Errorf("a call without a store: %v, want an infrastructure error", err)
	}
}

// TestFileListCapped: a skill whose paths are long lists files up to
// MaxListBytes and counts the rest.
func TestFileListCapped(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var files []store.SkillFile
	for i := range store.MaxSkillFiles {
		files = append(files, store.SkillFile{Path: fmt.Sprintf("%03d/%s/%s.md", i, strings.Repeat("p", 250), strings.Repeat("q", 250)), Data: []byte("x")})
	}
	if _, err := st.PutSkill(ctx, store.Skill{OrgID: "o1", Name: "many", Description: "d", Document: "doc", Files: files, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := st.AttachSkill(ctx, "o1", "helper", "many", at); err != nil {
		t.Fatal(err)
	}
	got, err := run(t, skills.Tool(st), helper, `{"name":"many"}`)
	if err != nil {
		t.Fatal(err)
	}
	_, list, _ := strings.Cut(got, "Files of skill many")
	if len(list) > skills.MaxListBytes+200 || !strings.Contains(list, "more files not listed") {
		t.Errorf("the file list is %d bytes (limit %d) and says %q at its end", len(list), skills.MaxListBytes, list[max(0, len(list)-80):])
	}
	if !strings.Contains(list, "- 000/") {
		t.Error("the first file is not listed")
	}
}
