package builtin

import (
	"slices"
	"unicode/utf8"

	"github.com/quiverhq/quiver/builtin/discovery"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
)

// Ceilings on the built-in tools' serialised definitions, in characters. A
// tool that pushes a total over its ceiling fails TestDefinitionCeilings:
// raise the ceiling in the same change, or write shorter.
const (
	// AlwaysPaidCeiling bounds the definitions every tool-using turn pays:
	// the six workspace tools and the five always-on helpers.
	AlwaysPaidCeiling = 13456
	// WidestCeiling bounds the widest toolset any turn can get.
	WidestCeiling = 40122
)

// Ceilings on the built-in tools' prompt fragments, in characters of
// authored text, each distinct fragment once. Fragments are paid on every
// model call of a turn that declares their tools, like definitions;
// TestDefinitionCeilings holds them too.
const (
	// AlwaysPaidFragmentsCeiling bounds the fragments of the always-on
	// tools, which every tool-using turn's system prompt carries.
	AlwaysPaidFragmentsCeiling = 1000
	// WidestFragmentsCeiling bounds the fragments of every built-in tool.
	WidestFragmentsCeiling = 2400
)

// Sizes are the built-in catalog's measurements ("quiver tools --json"
// prints them): every tool's definition and fragment sizes, the
// always-paid and widest totals of both against their ceilings, and what
// every feature switch gates.
type Sizes struct {
	Tools      []ToolSize `json:"tools"`
	AlwaysPaid Total      `json:"always_paid"`
	Widest     Total      `json:"widest"`
	// Fragments are the totals of the prompt fragments the always-on tools
	// and every tool bring, each distinct text counted once.
	Fragments FragmentTotals `json:"fragments"`
	// Switches are the feature switches and what each gates.
	Switches []registry.Switch `json:"switches"`
}

// ToolSize is one built-in tool with its sizes.
type ToolSize struct {
	Name     string `json:"name"`
	Family   string `json:"family"`
	Access   string `json:"access"`
	AlwaysOn bool   `json:"always_on"`
	// OnlyDeferred marks the tool-discovery tools: declared only in turns
	// whose large toolset is deferred, which declare fewer definitions,
	// so neither total counts them.
	OnlyDeferred    bool `json:"only_deferred,omitempty"`
	DefinitionChars int  `json:"definition_chars"`
	// FragmentChars is the authored size of the tool's prompt fragments;
	// a fragment several tools share counts on each of them here, and
	// once in the totals.
	FragmentChars int `json:"fragment_chars"`
	// Limits are the tool's hard limits (fetch_url's max_length_max, ...),
	// as its spec declares them; empty when it declares none.
	Limits []tool.Limit `json:"limits"`
}

// Total is a size total against its ceiling, in characters.
type Total struct {
	Chars   int `json:"chars"`
	Ceiling int `json:"ceiling"`
}

// FragmentTotals are the prompt fragments' totals against their ceilings,
// in characters of authored text (before macros expand).
type FragmentTotals struct {
	AlwaysPaid Total `json:"always_paid"`
	Widest     Total `json:"widest"`
}

// CatalogSizes measures the built-in catalog as NewCatalog builds it from
// the zero CatalogDeps (every tool declared, the default configuration).
func CatalogSizes() Sizes {
	out := Sizes{
		AlwaysPaid: Total{Ceiling: AlwaysPaidCeiling},
		Widest:     Total{Ceiling: WidestCeiling},
		Fragments: FragmentTotals{
			AlwaysPaid: Total{Ceiling: AlwaysPaidFragmentsCeiling},
			Widest:     Total{Ceiling: WidestFragmentsCeiling},
		},
	}
	cat := NewCatalog(CatalogDeps{})
	seen := map[string]bool{}
	for _, t := range cat.Tools() {
		s := t.Spec()
		n := t.DeclarationChars()
		info := ToolSize{Name: s.Name, Family: t.Family(), Access: s.Access.String(), AlwaysOn: s.AlwaysOn, DefinitionChars: n, Limits: append([]tool.Limit{}, s.Limits...)}
		if slices.Contains(discovery.Names, s.Name) {
			info.OnlyDeferred = true
			out.Tools = append(out.Tools, info)
			continue
		}
		out.Widest.Chars += n
		if s.AlwaysOn {
			out.AlwaysPaid.Chars += n
		}
		for _, f := range s.Fragments {
			m := utf8.RuneCountInString(f)
			info.FragmentChars += m
			if seen[f] {
				continue
			}
			seen[f] = true
			out.Fragments.Widest.Chars += m
			if s.AlwaysOn {
				out.Fragments.AlwaysPaid.Chars += m
			}
		}
		out.Tools = append(out.Tools, info)
	}
	out.Switches = cat.Switches()
	return out
}

// FamilySwitches returns the families of s's optional tools that no entry
// of s.Switches names, in tool order, once each: such a family's own name
// is a switch too, which set off leaves out that family's tools. Nil when
// every optional family has its switch listed.
func (s Sizes) FamilySwitches() []string {
	named := map[string]bool{}
	for _, sw := range s.Switches {
		named[sw.Family] = true
	}
	var out []string
	for _, t := range s.Tools {
		if !t.AlwaysOn && !named[t.Family] && !slices.Contains(out, t.Family) {
			out = append(out, t.Family)
		}
	}
	return out
}
