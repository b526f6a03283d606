package prompt_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// skillCatalog is catalog() with a tool named prompt.SkillsTool.
func skillCatalog() *registry.Catalog {
	c := catalog()
	h := func(context.Context, tool.Scope, in) (string, error) { return "", nil }
	c.Register(tool.New(tool.Spec{Name: prompt.SkillsTool, Family: "skills", Description: "Load a skill."}, h))
	return c
}

func skillFacts(n int, desc string) turn.Facts {
	f := facts("Ana", "", time.Unix(0, 0))
	f.Agent.Allow = []string{"search", prompt.SkillsTool}
	for i := range n {
		f.Skills = append(f.Skills, turn.Skill{Name: fmt.Sprintf("skill-%03d", i), Description: desc})
	}
	return f
}

func system(t *testing.T, c *registry.Catalog, f turn.Facts) string {
	t.Helper()
	req, err := prompt.Assemble(f, c.Select(f))
	if err != nil {
		t.Fatal(err)
	}
	return req.System
}

func TestSkillsListedOnlyWithLoadSkill(t *testing.T) {
	f := skillFacts(2, "Fill {{if capability:tool_use}}forms{{end}}.\nTwo lines.")
	got := system(t, skillCatalog(), f)
	for _, want := range []string{
		"\n- skill-000: Fill {{if capability:tool_use}}forms{{end}}. Two lines.",
		"\n- skill-001: ",
		"Skills you can load with load_skill",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("system prompt lacks %q (the descriptions are text, not templates):\n%s", want, got)
		}
	}
	if !strings.HasPrefix(got, "You are helpful.\n\nShared rule.\n\nSearch rule.\n\nSkills") {
		t.Errorf("the list is not after the fragments:\n%s", got)
	}
	// Not allowed: no list.
	f.Agent.Allow = []string{"search"}
	if got := system(t, skillCatalog(), f); strings.Contains(got, "skill-000") {
		t.Errorf("listed without load_skill:\n%s", got)
	}
	// No such tool in the catalog: no list.
	if got := system(t, catalog(), skillFacts(2, "x")); strings.Contains(got, "skill-000") {
		t.Errorf("listed without load_skill in the catalog:\n%s", got)
	}
	// The cache gives the same prompt.
	cache := prompt.NewCache(0)
	for range 2 {
		f := skillFacts(2, "Fill forms.")
		req, err := cache.Fixed(f, skillCatalog().Select(f))
		if err != nil {
			t.Fatal(err)
		}
		if want := system(t, skillCatalog(), f); req.System != want {
			t.Errorf("cached system prompt:\n%s\nwant:\n%s", req.System, want)
		}
	}
}

func TestSkillsListCapped(t *testing.T) {
	long := strings.Repeat("d", prompt.MaxListedDescriptionRunes+500)
	got := prompt.SkillsFragment(skillFacts(prompt.MaxListedSkills+7, long), skillCatalog().Select(skillFacts(1, "x")))
	lines := strings.Split(got, "\n")
	if n := strings.Count(got, "\n- skill-"); n != prompt.MaxListedSkills {
		t.Errorf("%d skills listed; the limit is %d", n, prompt.MaxListedSkills)
	}
	if last := lines[len(lines)-1]; last != "(7 more skills are attached and not listed.)" {
		t.Errorf("last line %q", last)
	}
	for _, l := range lines[1 : len(lines)-1] {
		desc := strings.TrimPrefix(l[strings.Index(l, ": ")+2:], "")
		if n := len([]rune(desc)); n > prompt.MaxListedDescriptionRunes {
			t.Fatalf("a description of %d characters; the limit is %d", n, prompt.MaxListedDescriptionRunes)
		}
	}
	if prompt.SkillsFragment(skillFacts(0, "x"), skillCatalog().Select(skillFacts(1, "x"))) != "" {
		t.Error("a list for an agent with no skills")
	}
}

// TestSkillsListStableAndFresh: the list is the same for every caller of
// the agent (the system prompt stays cacheable), and a cache that
// rendered the prompt before still shows a changed list.
func TestSkillsListStableAndFresh(t *testing.T) {
	cache := prompt.NewCache(0)
	c := skillCatalog()
	a := skillFacts(2, "Fill forms.")
	b := skillFacts(2, "Fill forms.")
	b.Caller.DisplayName, b.Caller.UserID, b.Start = "Bùi Thị Hoa", "u_99", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	ra, err := cache.Fixed(a, c.Select(a))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := cache.Fixed(b, c.Select(b))
	if err != nil {
		t.Fatal(err)
	}
	if ra.System != rb.System {
		t.Errorf("two callers' system prompts differ:\n%s\n%s", ra.System, rb.System)
	}
	changed := skillFacts(2, "Fill and sign forms.")
	rc, err := cache.Fixed(changed, c.Select(changed))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rc.System, "- skill-000: Fill and sign forms.") {
		t.Errorf("the cache served the old list:\n%s", rc.System)
	}
}
