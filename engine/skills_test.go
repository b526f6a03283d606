package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// countedSkills lists skills by "org/agent", counting the reads.
type countedSkills struct {
	skills map[string][]store.Skill
	reads  atomic.Int32
}

func (c *countedSkills) AgentSkills(_ context.Context, orgID, agent string) ([]store.Skill, error) {
	c.reads.Add(1)
	return c.skills[orgID+"/"+agent], nil
}

// TestSkillsCollectedOncePerTurn: the agent's skills are read once, when
// the turn is collected, for its own organisation and agent; load_skill
// is declared and the system prompt lists them only when the agent
// allows it.
func TestSkillsCollectedOncePerTurn(t *testing.T) {
	ctx := context.Background()
	src := &countedSkills{skills: map[string][]store.Skill{
		"acme/helper":  {{Name: "pdf-forms", Description: "Fill PDF forms."}},
		"other/helper": {{Name: "theirs", Description: "Another organisation's."}},
	}}
	eng := engine.New(engine.Config{
		Runtime: engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{})}),
		Skills:  src,
	})
	for _, allow := range [][]string{{"load_skill"}, nil} {
		src.reads.Store(0)
		r := request("ana", "", false)
		agent := *r.Agent
		agent.Agent.Allow = allow
		r.Agent = &agent
		c, err := eng.Collect(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Facts().Skills; len(got) != 1 || got[0] != (turn.Skill{Name: "pdf-forms", Description: "Fill PDF forms."}) {
			t.Errorf("facts' skills %+v", got)
		}
		p, err := eng.Prepare(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if n := src.reads.Load(); n != 1 {
			t.Errorf("skills read %d times in one turn, want once", n)
		}
		listed := strings.Contains(p.Start.Request.System, "- pdf-forms: Fill PDF forms.")
		_, declared := p.Start.Toolset.Lookup("load_skill")
		if want := allow != nil; listed != want || declared != want {
			t.Errorf("allow %v: listed %v, declared %v; want %v", allow, listed, declared, want)
		}
		if strings.Contains(p.Start.Request.System, "theirs") {
			t.Error("another organisation's skill is listed")
		}
	}
}
