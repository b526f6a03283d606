package webui_test

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quiverhq/quiver/skill"
	"github.com/quiverhq/quiver/store"
)

// TestSkillZipLimitMatchesReader: the page refuses a .zip over the
// reader's limit before sending it.
func TestSkillZipLimitMatchesReader(t *testing.T) {
	src, err := os.ReadFile("assets/js/skills.js")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`MAX_ZIP_BYTES = 16 \* 1024 \* 1024;`).Find(src) == nil || skill.MaxZipBytes != 16<<20 {
		t.Errorf("MAX_ZIP_BYTES is not 16 MiB, or skill.MaxZipBytes (%d) is not", skill.MaxZipBytes)
	}
}

// agentSkills are the names of the skills listed on the agent page.
func (b *browser) agentSkills() []string {
	b.t.Helper()
	return eval[[]string](b, `Array.from(document.querySelectorAll('#skills-list li'), (li) => li.dataset.skill)`)
}

// TestSkillsOnAgentPage: over the real API, an admin attaches one of the
// organisation's skills on the agent page, detaches it after a
// confirmation, and adds a skill from a .zip, attached at once; a member
// sees the skills and no control to change them.
func TestSkillsOnAgentPage(t *testing.T) {
	st, _, b := realAPI(t)
	ctx := context.Background()
	now := time.Now().UTC()
	if _, err := st.PutSkill(ctx, store.Skill{OrgID: "org_a", Name: "invoices", Description: "Write invoices in the house format.",
		Document: "---\nname: invoices\ndescription: Write invoices in the house format.\n---\nBody\n",
		Files:    []store.SkillFile{{Path: "format.md", Data: []byte("# Format")}}, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	b.open("#/agents/assistant", `#skills-none`)
	b.WaitText(`#skills-none`, "No skill is attached to this agent.")

	b.Do("attach", chromedp.WaitVisible(chromedp.CSS(`#skills-chooser`)), chromedp.SetValue(chromedp.CSS(`#skills-pick`), "invoices"),
		chromedp.Click(chromedp.CSS(`#skills-attach`)))
	b.WaitText(`#skills-status`, "Attached invoices.")
	b.WaitText(`#skills-list li[data-skill="invoices"]`, "1 file besides SKILL.md")
	b.WaitText(`#skills-list li[data-skill="invoices"]`, "Write invoices in the house format.")
	if sks, err := st.AgentSkills(ctx, "org_a", "assistant"); err != nil || len(sks) != 1 {
		t.Fatalf("attached in the store: %v, %v", sks, err)
	}
	b.Shot("attached")

	b.Do("detach", chromedp.Click(chromedp.CSS(`li[data-skill="invoices"] button.detach-skill`)))
	b.confirmDialog("Detach “invoices” from this agent?", "yes")
	b.WaitText(`#skills-status`, "Detached invoices.")
	b.Do("gone", chromedp.WaitVisible(chromedp.CSS(`#skills-none`)))
	if sks, _ := st.AgentSkills(ctx, "org_a", "assistant"); len(sks) != 0 {
		t.Errorf("still attached: %v", sks)
	}

	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	for name, content := range map[string]string{"notes/SKILL.md": "---\nname: notes\ndescription: Take meeting notes.\n---\nBody\n"} {
		w, _ := zw.Create(name)
		w.Write([]byte(content))
	}
	zw.Close()
	paths := writeFiles(t, map[string][]byte{"notes.zip": z.Bytes(), "bad.zip": []byte("not a zip")})
	b.Do("add notes.zip", chromedp.SetUploadFiles(chromedp.CSS(`#skills-input`), []string{paths["notes.zip"]}))
	b.WaitText(`#skills-status`, "Added and attached notes.")
	b.WaitText(`#skills-list`, "Take meeting notes.")
	b.Do("add bad.zip", chromedp.SetUploadFiles(chromedp.CSS(`#skills-input`), []string{paths["bad.zip"]}))
	b.WaitText(`#skills-status`, "bad.zip was not added: ")
	if got := b.agentSkills(); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("listed %v, want notes", got)
	}

	now = time.Now().UTC()
	if err := st.CreateUser(ctx, store.User{ID: "bruno", OrgID: "org_a", DisplayName: "Bruno Costa", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	b.signInAs(st, "bruno")
	b.open("#/agents/assistant", `#skills-list li[data-skill="notes"]`)
	if n := eval[int](b, `document.querySelectorAll('#skills-add, #skills-input, #skills-pick, .detach-skill').length`); n != 0 {
		t.Errorf("a member is offered %d controls to change skills", n)
	}
}
