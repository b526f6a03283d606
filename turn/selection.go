package turn

import (
	"slices"

	"github.com/quiverhq/quiver/tmpl"
)

// Selection is the part of a turn's facts that decides its tools: what
// tool selection (registry.Catalog.Select) and a tool's requirement
// (tool.Spec.Requires) may read. It leaves out everything that differs
// between the turns of one agent under one configuration — who asks, by
// name, when, in which conversation, who pays — so that the toolset
// selected for one turn holds for every turn with an equal Selection,
// and can be kept (engine's selection cache, which keys on every field:
// a field added here must join that key).
type Selection struct {
	// Model is the model that runs the turn, with its capabilities.
	Model Model
	// Allow is the agent's allowlist (Agent.Allow).
	Allow []string
	// Switches are the feature switches in force (Agent.Switches).
	Switches map[string]bool
	// Attachments is the number of files attached to the conversation.
	Attachments int
	// Knowledge reports whether the agent has knowledge attached.
	Knowledge bool
	// Skills are the skills attached to the agent (Facts.Skills).
	Skills []Skill
	// Backends names the configured keys and backends.
	Backends []string
	// Network is the organisation's network mode for the turn.
	Network string
	// Permissions are the caller's permissions on this surface
	// (Caller.Permissions).
	Permissions []string
	// Deliberate is Facts.Deliberate: the mode gates the turn.
	Deliberate bool
	// Surface is Place.Surface: where the conversation happens, which
	// decides the message tools a turn may declare.
	Surface string
}

// Selection returns the facts' Selection. Its slices and map are the
// facts' own: treat them as read-only, as every reader of facts does.
func (f Facts) Selection() Selection {
	return Selection{
		Model: f.Model, Allow: f.Agent.Allow, Switches: f.Agent.Switches,
		Attachments: f.Attachments, Knowledge: f.Knowledge, Skills: f.Skills, Backends: f.Backends,
		Network: f.Network, Permissions: f.Caller.Permissions, Deliberate: f.Deliberate,
		Surface: f.Place.Surface,
	}
}

// Facts returns facts holding only s (and the agent prompt given, which
// the system prompt reads besides s): what a result computed from s
// alone is computed from, so that nothing outside s can reach it.
func (s Selection) Facts(prompt tmpl.Authored) Facts {
	return Facts{
		Caller: Caller{Permissions: s.Permissions},
		Agent:  Agent{Prompt: prompt, Allow: s.Allow, Switches: s.Switches},
		Model:  s.Model, Attachments: s.Attachments, Knowledge: s.Knowledge, Skills: s.Skills,
		Backends: s.Backends, Network: s.Network, Deliberate: s.Deliberate,
		Place: Place{Surface: s.Surface},
	}
}

// Switch reports whether the switch is set on (Agent.Switch).
func (s Selection) Switch(name string) bool { return s.Switches[name] }

// Off reports whether the switch is set, and set off (Agent.Off).
func (s Selection) Off(name string) bool {
	on, set := s.Switches[name]
	return set && !on
}

// HasBackend reports whether the named key or backend is configured.
func (s Selection) HasBackend(name string) bool { return slices.Contains(s.Backends, name) }

// HasPermission reports whether the caller holds the permission.
func (s Selection) HasPermission(p string) bool { return slices.Contains(s.Permissions, p) }
