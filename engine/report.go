package engine

import (
	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
)

// Report is an inspection as one flat document ("quiver turn --json"
// prints it): the agent and the model, the message, the request the
// model would get (system prompt, context message, tool definitions and
// their sizes), every tool left out with its reason and the template's
// warnings, and, when Deliberate Tool Mode gated the turn, what it matched
// and why it declared each tool.
type Report struct {
	Agent   string `json:"agent"`
	Model   string `json:"model"`
	Message string `json:"message"`
	System  string `json:"system"`
	Context string `json:"context"`
	// Tools are the declared definitions in declaration order.
	Tools []prompt.Definition `json:"tools"`
	Sizes prompt.Sizes        `json:"sizes"`
	// Ceilings are the catalog's, which the engine does not own: the
	// caller sets them.
	Ceilings Ceilings `json:"ceilings"`
	// Excluded is why each catalog tool is left out; never nil.
	Excluded []registry.Exclusion `json:"excluded"`
	// Warnings are template warnings from rendering the system prompt.
	Warnings []string `json:"warnings"`
	// AllowlistWarnings are the agent's allowlist and switch warnings
	// (registry.Catalog.CheckAgent), which the caller sets: the check
	// depends on which registrations it can read.
	AllowlistWarnings []registry.Warning `json:"allowlist_warnings,omitempty"`
	// Intent is what Deliberate Tool Mode matched; nil when the mode did
	// not gate the turn.
	Intent []intent.Match `json:"intent,omitzero"`
	// Declared says why the mode declared each tool, in declaration
	// order; nil when the mode did not gate the turn.
	Declared []intent.Declared `json:"declared,omitzero"`
	// History is how the first model call fits the model's context
	// window: the window, the estimated tokens sent, how many earlier
	// messages it leaves out and the marker that says so; nil when the
	// inspection had no runner (quiver turn: no conversation).
	History *agent.Cut `json:"history,omitempty"`
}

// Ceilings are the ceilings of a catalog's definition sizes, reported
// beside the sizes (see builtin.AlwaysPaidCeiling, builtin.WidestCeiling).
type Ceilings struct {
	AlwaysPaidChars int `json:"always_paid_chars"`
	WidestChars     int `json:"widest_chars"`
}

// Report returns the inspection as a Report, with Ceilings and
// AllowlistWarnings zero for the caller to set. The model is
// "provider:name"; Intent and Declared are set (never nil) only when
// ins.Deliberate.
func (ins Inspection) Report() Report {
	f, req := ins.Start.Facts, ins.Start.Request
	out := Report{
		Agent: f.Agent.Name, Model: f.Model.Provider + ":" + f.Model.Name, Message: ins.Start.Message,
		System: req.System, Context: req.Context, Tools: req.Tools, Sizes: req.Sizes,
		Excluded: ins.Excluded, Warnings: ins.Warnings, History: ins.History,
	}
	if out.Excluded == nil {
		out.Excluded = []registry.Exclusion{}
	}
	if ins.Deliberate {
		out.Intent, out.Declared = ins.Matches, ins.Declared
		if out.Intent == nil {
			out.Intent = []intent.Match{}
		}
		if out.Declared == nil {
			out.Declared = []intent.Declared{}
		}
	}
	return out
}
