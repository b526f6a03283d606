package engine

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
)

// Inspection is what a turn sends or sent, for the inspector: its facts,
// toolset and request, why it left each other tool out, why Deliberate
// Tool Mode declared each tool and what it matched.
type Inspection struct {
	Start agent.Start
	// Excluded is why each catalog tool is left out; never nil.
	Excluded []registry.Exclusion
	// Warnings are the prompt template's warnings.
	Warnings []string
	// Declared says why each declared tool is declared under the mode;
	// empty (never nil) when the mode is off, and for a stored turn that
	// recorded no reasons.
	Declared []intent.Declared
	// Matches are the mode's matches for the message; empty when off.
	Matches []intent.Match
	// Deliberate is true when Deliberate Tool Mode gated the turn Inspect
	// prepared for the message (with a turnID too: that turn, not the
	// stored one).
	Deliberate bool
	// History is how the turn's first model call fits the model's context
	// window (agent.Runner.Preview): what it sends and what it leaves out
	// behind the marker; nil when the engine has no Runner.
	History *agent.Cut
	// Replay is each model call of the turn as it was sent (a stored
	// turn's, from its transcript) or, for a draft, its first call as it
	// would be (agent.Runner.Replay); nil when the engine has no Runner.
	Replay *agent.Replay
	// Steps is how many model calls the stored turn made; 0 for a draft.
	Steps int
}

// Inspect returns the request r's message would send now, or, with
// turnID, the stored turn's: its restored toolset and request and its
// exclusions as recorded when it started (see pastExclusions), or for a
// turn stored before those were, the restored set's with today's reasons
// (see explainStored), and its model calls as they were sent. Nothing
// runs and nothing is written (r.DryRun is implied). A draft — no turnID,
// and not the answer to a paused turn — has no turn id yet: its
// Start.Facts.TurnID is "", never one made up for it. A turnID not of
// the conversation is ErrNoTurn.
func (e *Engine) Inspect(ctx context.Context, r Request, turnID string) (Inspection, error) {
	r.DryRun = true
	c, err := e.Collect(ctx, r)
	if err != nil {
		return Inspection{}, err
	}
	p, err := e.Prepare(ctx, c)
	if err != nil {
		return Inspection{}, err
	}
	out := Inspection{Start: p.Start, Excluded: p.Start.Toolset.Excluded(), Warnings: p.Warnings,
		Declared: []intent.Declared{}, Matches: p.Intent.Result.Matches, Deliberate: p.Intent.Active}
	switch {
	case turnID != "":
		if err := e.past(ctx, p, turnID, &out); err != nil {
			return Inspection{}, err
		}
	case p.Intent.Declared != nil:
		out.Declared = p.Intent.Declared
	}
	if e.cfg.Runner != nil {
		c := e.cfg.Runner.Preview(out.Start)
		rp := e.cfg.Runner.Replay(out.Start, out.Steps)
		out.History, out.Replay = &c, &rp
	}
	if turnID == "" && !p.Resume {
		out.Start.Facts.TurnID = ""
	}
	if out.Excluded == nil {
		out.Excluded = []registry.Exclusion{}
	}
	if out.Matches == nil {
		out.Matches = []intent.Match{}
	}
	return out, nil
}

// past fills out with the stored turn turnID of p's conversation.
func (e *Engine) past(ctx context.Context, p *Prepared, turnID string, out *Inspection) error {
	if e.cfg.Repos.Turns == nil {
		return ErrNoTurn
	}
	t, err := e.cfg.Repos.Turns.GetTurn(ctx, p.facts.Place.OrgID, turnID)
	if err != nil || t.ConversationID != p.facts.Place.ConversationID {
		if err == nil || isNotFound(err) {
			return ErrNoTurn
		}
		return fmt.Errorf("read turn: %w", err)
	}
	start := p.Start
	start.Toolset, start.Declared = restore(p.Catalog, start.Facts, t.Tools).WithSelected(t.Selected), t.Declared
	start.Facts.TurnID, start.Facts.Caller.Timezone = t.ID, t.Timezone
	if start.Request, err = prompt.Assemble(start.Facts, start.Toolset); err != nil {
		return err
	}
	out.Start, out.Warnings, out.Steps = start, start.Request.Warnings, t.Steps
	if t.Excluded == nil {
		out.Excluded = explainStored(start.Toolset.Excluded(), p.Catalog.Select(start.Facts).Excluded())
	} else {
		out.Excluded = pastExclusions(t, start.Toolset.Excluded())
	}
	for _, d := range start.Declared {
		// A tool the restored set no longer holds (its server gone) is
		// listed with the exclusions, not here.
		if _, ok := start.Toolset.Lookup(d.Name); ok {
			out.Declared = append(out.Declared, intent.Declared{Name: d.Name, Reason: d.Reason})
		}
	}
	return nil
}

// pastExclusions is what a turn that recorded its exclusions left out:
// exactly the recorded reasons, then any tool it declared that its
// restored toolset has lost since (no longer registered, or no longer
// admitted), with restored's reason, so that a declared tool does not
// vanish from the inspector unexplained.
func pastExclusions(t store.Turn, restored []registry.Exclusion) []registry.Exclusion {
	out := make([]registry.Exclusion, 0, len(t.Excluded))
	for _, e := range t.Excluded {
		out = append(out, registry.Exclusion{Name: e.Name, Reason: e.Reason})
	}
	declared := make(map[string]bool, len(t.Tools))
	for _, name := range t.Tools {
		declared[name] = true
	}
	for _, e := range restored {
		if declared[e.Name] {
			out = append(out, registry.Exclusion{Name: e.Name, Reason: "in the toolset this turn started with; today: " + e.Reason})
		}
	}
	return out
}

// explainStored adds to the exclusions of a turn stored before turns
// recorded theirs the reason the catalog gives today, where it has one:
// such a turn records which tools it declared, not why the others were
// left out, so "not in the toolset this turn started with" alone would
// hide the likely cause (a switch, the allowlist, a missing backend).
func explainStored(stored, today []registry.Exclusion) []registry.Exclusion {
	why := make(map[string]string, len(today))
	for _, e := range today {
		why[e.Name] = e.Reason
	}
	out := make([]registry.Exclusion, len(stored))
	for i, e := range stored {
		out[i] = e
		if r := why[e.Name]; r != "" && r != e.Reason {
			out[i].Reason = e.Reason + "; today: " + r
		}
	}
	return out
}
