package prompt

import (
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/turn"
)

// SkillsTool is the tool in whose turns the system prompt lists the
// agent's skills (builtin/skills' load_skill).
const SkillsTool = "load_skill"

// Bounds of the skills list in the system prompt.
const (
	// MaxListedSkills is how many skills the list names; the rest are
	// counted, not named.
	MaxListedSkills = 50
	// MaxListedDescriptionRunes bounds each description as listed.
	MaxListedDescriptionRunes = 1024
)

// SkillsFragment is the paragraph that lists the turn's skills (names
// and descriptions, at most MaxListedSkills, in the facts' order), or ""
// when the toolset does not hold SkillsTool or the agent has no skills.
// The descriptions come from imported files, so the paragraph is plain
// text, never rendered as a template; each description is one line, cut
// to MaxListedDescriptionRunes. Skills are the agent's, so the paragraph
// is the same for every turn of the agent: it belongs to the system
// prompt.
func SkillsFragment(f turn.Facts, ts registry.Toolset) string {
	if len(f.Skills) == 0 {
		return ""
	}
	if _, ok := ts.Lookup(SkillsTool); !ok {
		return ""
	}
	var b strings.Builder
	b.WriteString("Skills you can load with " + SkillsTool + " (name: when to use it). Load a skill before following it; load only the ones the task needs:")
	for i, s := range f.Skills {
		if i == MaxListedSkills {
			fmt.Fprintf(&b, "\n(%d more skills are attached and not listed.)", len(f.Skills)-MaxListedSkills)
			break
		}
		fmt.Fprintf(&b, "\n- %s: %s", s.Name, listedLine(s.Description, MaxListedDescriptionRunes))
	}
	return b.String()
}

// listedLine is s with its runs of white space made one space, cut to at
// most limit characters (an ellipsis ending a cut text).
func listedLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit-1]) + "…"
}

// withSkills appends the skills paragraph to a rendered system prompt.
func withSkills(r tmpl.Result, f turn.Facts, ts registry.Toolset) tmpl.Result {
	frag := SkillsFragment(f, ts)
	switch {
	case frag == "":
	case r.Text == "":
		r.Text = frag
	default:
		r.Text += "\n\n" + frag
	}
	return r
}
