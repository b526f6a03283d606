package registry

import (
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// switchDef is one feature switch the template language knows (the
// capability names of package tmpl, in the same order): the tool family it
// gates, or, for a switch that gates none, what it changes.
type switchDef struct {
	name, family, effect string
	// optIn says the family's tools also need the switch on (their
	// requirement says so): unset leaves them out too.
	optIn bool
}

// switchDefs says what every known switch does. A switch that gates a
// family is named like it, except self_teaching (the memory tools) and
// sticker_usage (the sticker tools), the seed's names for them, and
// conversation_search (the history family's search_conversations). Families
// no catalog tool has yet are the names their tools will take.
var switchDefs = []switchDef{
	{name: "tool_use", effect: "every tool: off, the turn declares none and its prompt gets no tool fragments"},
	{name: "self_teaching", family: "memory"},
	{name: "personal_memories", effect: "prompt conditions only ({{if capability:personal_memories}})"},
	{name: "emoji_usage", effect: "prompt conditions only ({{if capability:emoji_usage}})"},
	{name: "sticker_usage", family: "sticker"},
	{name: "web_search", family: "web_search"},
	{name: "manage_message", family: "manage_message"},
	{name: "thread_creation", family: "thread_creation"},
	{name: "image_generation", family: "image_generation"},
	{name: "video_generation", family: "video_generation"},
	{name: "voice_message", family: "voice_message"},
	{name: "user_blocking", family: "user_blocking"},
	{name: "short_term_memory", family: "short_term_memory"},
	{name: "shared_memory", effect: "memory tools: on, save_memory, update_memory and forget_memory work on the organisation's shared memories instead of the person's own"},
	{name: "time_awareness", effect: "the current time in the context message: off leaves it out"},
	{name: "budget", family: "budget", optIn: true},
	{name: "conversation_search", family: "history", optIn: true},
}

// SwitchFamily returns the tool family a known switch gates, or "" when
// the switch gates no family (tool_use gates every tool, and is not a
// family switch) or is not known.
func SwitchFamily(name string) string {
	for _, d := range switchDefs {
		if d.name == name {
			return d.family
		}
	}
	return ""
}

// Switch is what one known feature switch does in a catalog.
type Switch struct {
	Name string `json:"name"`
	// Family is the tool family the switch gates; "" when it gates none.
	Family string `json:"family,omitempty"`
	// Tools are the catalog tools the switch takes out when set off, in
	// registration order: those of Family and those whose spec names the
	// switch. Never nil.
	Tools []string `json:"tools"`
	// NoTool is true for a family switch that no catalog tool answers yet:
	// setting it changes nothing.
	NoTool bool `json:"no_tool"`
	// Effect says, for people, what the switch changes.
	Effect string `json:"effect"`
}

// Switches describes every known feature switch against the catalog, in
// the template language's order.
func (c *Catalog) Switches() []Switch {
	out := make([]Switch, 0, len(switchDefs))
	for _, d := range switchDefs {
		s := Switch{Name: d.name, Family: d.family, Tools: []string{}, Effect: d.effect}
		if d.family == "" {
			out = append(out, s)
			continue
		}
		for _, t := range c.tools {
			if !t.Spec().AlwaysOn && gatedBy(t, d.name) {
				s.Tools = append(s.Tools, t.Name())
			}
		}
		switch {
		case len(s.Tools) == 0:
			s.NoTool = true
			s.Effect = fmt.Sprintf("no tool yet: would gate the %s family; setting it changes nothing", d.family)
		case d.optIn:
			s.Effect = "on declares " + strings.Join(s.Tools, ", ") + "; unset or off leaves them out"
		default:
			s.Effect = "off leaves out " + strings.Join(s.Tools, ", ")
		}
		out = append(out, s)
	}
	return out
}

// gatingSwitches are the switches that take an optional tool out when set
// off: the one named like its family, the known switch of that family
// (self_teaching for memory), and those its spec names.
func gatingSwitches(t *tool.Tool) []string {
	fam := t.Family()
	names := []string{fam}
	for _, d := range switchDefs {
		if d.family == fam && d.name != fam {
			names = append(names, d.name)
		}
	}
	return append(names, t.Spec().Switches...)
}

// gatedBy reports whether the switch gates t.
func gatedBy(t *tool.Tool, name string) bool {
	for _, g := range gatingSwitches(t) {
		if g == name {
			return true
		}
	}
	return false
}

// switchedOff returns "NAME switch off" for the first switch gating t
// (gates, its gatingSwitches) that the selection sets off, else "".
// Always-on tools answer only to tool_use, which Select checks first.
func switchedOff(t *tool.Tool, gates []string, s turn.Selection) string {
	if len(s.Switches) == 0 || t.AlwaysOn() {
		return ""
	}
	for _, name := range gates {
		if s.Off(name) {
			return name + " switch off"
		}
	}
	return ""
}
