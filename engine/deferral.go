package engine

import (
	"slices"

	"github.com/quiverhq/quiver/builtin/discovery"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Defaults of the zero fields of Deferral.
const (
	DefaultDeferOverTools = 40
	DefaultDeferOverChars = 40_000
)

// deferredReason is why a deferred tool is not declared at the start.
const deferredReason = "deferred: declared when search_tools or get_tool_schema finds it"

// Deferral is when and how a turn declares only part of its tools and
// lets the model find the rest (tool discovery): when the toolset a turn
// would declare holds more than OverTools tools or more than OverChars
// characters of definitions, it declares its core tools (the always-on
// ones and those Core names, in registration order) followed by the
// discovery tools (search_tools, list_tools, get_tool_schema); the rest
// stay available and are declared, appended after the stable prefix,
// from the step after a discovery call finds them (agent.Expander, the
// mechanism Deliberate Tool Mode's recovery uses). A tool the
// conversation called on an earlier turn is declared from the start,
// after the discovery tools, in the order of its first call, so the
// prefix of a later turn is the one the earlier turn ended with.
//
// The zero value defers past DefaultDeferOverTools tools or
// DefaultDeferOverChars characters.
type Deferral struct {
	// Off declares every tool whatever the toolset's size.
	Off bool
	// OverTools and OverChars are the sizes past which a turn defers;
	// zero means the default.
	OverTools int
	OverChars int
	// Core names tools kept declared besides the always-on ones.
	Core []string
}

// applies reports whether ts is large enough to defer.
func (d Deferral) applies(ts registry.Toolset) bool {
	if d.Off {
		return false
	}
	overTools, overChars := d.OverTools, d.OverChars
	if overTools <= 0 {
		overTools = DefaultDeferOverTools
	}
	if overChars <= 0 {
		overChars = DefaultDeferOverChars
	}
	if ts.Len() > overTools {
		return true
	}
	chars := 0
	for _, t := range ts.Tools() {
		chars += t.DeclarationChars()
	}
	return chars > overChars
}

// Defer returns ts narrowed to its core tools with the catalog's
// discovery tools appended, when d applies to ts; else ts. A catalog
// without the discovery tools is not deferred: nothing could find the
// rest.
func (d Deferral) Defer(cat *registry.Catalog, ts registry.Toolset) registry.Toolset {
	if !d.applies(ts) {
		return ts
	}
	for _, name := range discovery.Names {
		if _, ok := cat.Lookup(name); !ok {
			return ts
		}
	}
	core := ts.Narrow(cat, func(t *tool.Tool) (bool, string) {
		if t.Spec().AlwaysOn || slices.Contains(d.Core, t.Name()) {
			return true, ""
		}
		return false, deferredReason
	})
	out, _ := cat.Extend(core, cat.Restore(discovery.Names), discovery.Names)
	return out.WithSelected(ts.Selected())
}

// Discover returns ts with the catalog's discovery tools appended, as a
// deferred turn declares them, for a turn Deliberate Tool Mode gated
// with its discovery family open (the person asked to find a tool): the
// discovery tools are never selected, so the gate cannot declare them,
// and they search the whole selection, what the mode left closed
// included. The turn is then a deferred one (see Prepare). Off, or a
// catalog without every discovery tool, returns ts unchanged.
func (d Deferral) Discover(cat *registry.Catalog, ts registry.Toolset) registry.Toolset {
	if d.Off {
		return ts
	}
	for _, name := range discovery.Names {
		if _, ok := cat.Lookup(name); !ok {
			return ts
		}
	}
	out, _ := cat.Extend(ts, cat.Restore(discovery.Names), discovery.Names)
	return out.WithSelected(ts.Selected())
}

// deferred reports whether ts is a deferred toolset: one holding the
// discovery tools.
func deferred(ts registry.Toolset) bool {
	_, ok := ts.Lookup(discovery.SearchName)
	return ok
}

// calledBefore names the tools the conversation's earlier turns called,
// in the order of their first call.
func calledBefore(history []store.Message) []string {
	var names []string
	for _, m := range history {
		if m.Role == "tool_call" && m.ToolName != "" && !slices.Contains(names, m.ToolName) {
			names = append(names, m.ToolName)
		}
	}
	return names
}
