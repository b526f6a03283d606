// Package prompt assembles what a model receives for a turn: the system
// prompt (the agent's authored prompt, then the fragments of the turn's
// tools), the per-turn context message, and the tool definitions with their
// sizes. Everything that changes per turn (caller, clock) goes into the
// context message, so the system prompt and definitions stay byte-identical
// for the same agent and toolset — the prefix a provider caches.
package prompt

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Definition is one tool as declared to a model.
type Definition = tool.Declaration

// Sizes accounts what the prompt costs, in characters (Unicode code points).
type Sizes struct {
	// DefinitionsChars is the serialised size of every declared definition.
	DefinitionsChars int `json:"definitions_chars"`
	// AlwaysPaidChars is the part of DefinitionsChars spent on always-on tools.
	AlwaysPaidChars int `json:"always_paid_chars"`
	// SystemChars is the size of the system prompt.
	SystemChars int `json:"system_chars"`
	// ContextChars is the size of the context message.
	ContextChars int `json:"context_chars"`
}

// Request is the assembled prompt of one turn.
type Request struct {
	System  string       `json:"system"`
	Context string       `json:"context"`
	Tools   []Definition `json:"tools"`
	Sizes   Sizes        `json:"sizes"`
}

// Assemble builds the turn's request from its facts and toolset. It fails
// only on facts that cannot be rendered (an unknown timezone name).
func Assemble(f turn.Facts, ts registry.Toolset) (Request, error) {
	ctxMsg, err := ContextMessage(f)
	if err != nil {
		return Request{}, fmt.Errorf("assemble prompt: %w", err)
	}
	req := Request{
		System:  System(f.Agent, ts),
		Context: ctxMsg,
		Tools:   make([]Definition, 0, ts.Len()),
	}
	for _, t := range ts.Tools() {
		n := t.DeclarationChars()
		req.Tools = append(req.Tools, t.Declaration())
		req.Sizes.DefinitionsChars += n
		if t.Spec().AlwaysOn {
			req.Sizes.AlwaysPaidChars += n
		}
	}
	req.Sizes.SystemChars = utf8.RuneCountInString(req.System)
	req.Sizes.ContextChars = utf8.RuneCountInString(req.Context)
	return req, nil
}

// System returns the system prompt: the agent's authored prompt, then the
// toolset's fragments, separated by blank lines. It depends on nothing but
// the agent and the toolset.
func System(a turn.Agent, ts registry.Toolset) string {
	var parts []string
	if p := strings.TrimSpace(a.Prompt.Text()); p != "" {
		parts = append(parts, p)
	}
	for _, f := range ts.Fragments() {
		if f = strings.TrimSpace(f); f != "" {
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, "\n\n")
}

// DefinitionChars is the serialised size of one definition, in characters:
// the unit of the definition ceilings. For a registered tool,
// tool.DeclarationChars gives the same number without serialising.
func DefinitionChars(d Definition) int {
	b, err := json.Marshal(d)
	if err != nil {
		// A Definition holds strings and a schema that was marshalled at
		// construction; failing here is a programming error.
		panic(fmt.Sprintf("prompt: marshal definition %s: %v", d.Name, err))
	}
	return utf8.RuneCount(b)
}
