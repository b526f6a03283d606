// Package prompt assembles what a model receives for a turn: the system
// prompt (the agent's authored prompt, then the fragments of the turn's
// tools), the per-turn context message, and the tool definitions with their
// sizes. Everything that changes per turn (caller, clock) goes into the
// context message, so the system prompt and definitions stay byte-identical
// for the same agent and toolset — the prefix a provider caches.
package prompt

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

//go:embed defaults/system.md
var defaultPrompt string

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
	// Deferred are the tools sent for the provider's own deferred
	// loading (llm.Request.Deferred); set by the engine, never by
	// Assemble.
	Deferred []Definition `json:"deferred,omitempty"`
	Sizes    Sizes        `json:"sizes"`
	// Warnings are the template warnings met rendering the system prompt,
	// each once.
	Warnings []string `json:"warnings"`
}

// Assemble builds the turn's request from its facts and toolset. It fails
// only on facts that cannot be rendered (an unknown timezone name).
func Assemble(f turn.Facts, ts registry.Toolset) (Request, error) {
	return assemble(f, ts, System)
}

// assemble is Assemble with the system prompt from system.
func assemble(f turn.Facts, ts registry.Toolset, system func(turn.Facts, registry.Toolset) (tmpl.Result, error)) (Request, error) {
	ctxMsg, err := ContextMessage(f)
	if err != nil {
		return Request{}, fmt.Errorf("assemble prompt: %w", err)
	}
	req, err := fixed(f, ts, system)
	if err != nil {
		return Request{}, err
	}
	return req.WithContext(ctxMsg), nil
}

// Fixed is Assemble without the context message: the system prompt, the
// definitions and their sizes, which are the same for every turn of one
// agent prompt, Selection and toolset (they read nothing else of f), so
// a caller may build them once and give each turn its context message
// with WithContext. It fails only on template limits.
func Fixed(f turn.Facts, ts registry.Toolset) (Request, error) { return fixed(f, ts, System) }

// fixed is Fixed with the system prompt from system.
func fixed(f turn.Facts, ts registry.Toolset, system func(turn.Facts, registry.Toolset) (tmpl.Result, error)) (Request, error) {
	sys, err := system(f, ts)
	if err != nil {
		return Request{}, fmt.Errorf("assemble prompt: %w", err)
	}
	req := Request{
		System:   sys.Text,
		Tools:    make([]Definition, 0, ts.Len()),
		Warnings: sys.Warnings,
	}
	for _, t := range ts.Tools() {
		n := t.DeclarationChars()
		req.Tools = append(req.Tools, t.Declaration())
		req.Sizes.DefinitionsChars += n
		if t.AlwaysOn() {
			req.Sizes.AlwaysPaidChars += n
		}
	}
	req.Sizes.SystemChars = utf8.RuneCountInString(req.System)
	return req, nil
}

// WithContext returns r with the turn's context message and its size,
// and its own copies of the definitions list and warnings, so that one
// Fixed request can serve many turns, each changing its copy freely.
func (r Request) WithContext(msg string) Request {
	r.Tools = slices.Clone(r.Tools)
	r.Warnings = slices.Clone(r.Warnings)
	r.Context = msg
	r.Sizes.ContextChars = utf8.RuneCountInString(msg)
	return r
}

// System renders the system prompt: the agent's authored prompt (Quiver's
// default prompt when the agent has none), then the toolset's fragments,
// then the agent's skills when load_skill is declared (SkillsFragment,
// plain text), separated by blank lines. Both are authored text, rendered as templates
// against the turn (capabilities, declared tools and families, macros).
// The result depends only on the agent, the model's tool support and the
// toolset — never on the caller or the clock — so it is the cache-stable
// prefix of every request. It fails only on template limits.
func System(f turn.Facts, ts registry.Toolset) (tmpl.Result, error) {
	r, err := render(source(f), Env(f, ts), ts.Fragments())
	if err != nil {
		return tmpl.Result{}, err
	}
	return withSkills(r, f, ts), nil
}

// source is the agent's authored prompt, or Quiver's default when it has
// none.
func source(f turn.Facts) tmpl.Authored {
	if strings.TrimSpace(f.Agent.Prompt.Text()) == "" {
		return tmpl.Author(defaultPrompt)
	}
	return f.Agent.Prompt
}

// render renders src, then the fragments, against env: System's work.
func render(src tmpl.Authored, env tmpl.Env, frags []string) (tmpl.Result, error) {
	out := tmpl.Result{Warnings: []string{}}
	var parts []string
	for i, a := range append([]tmpl.Authored{src}, authored(frags)...) {
		r, err := tmpl.Render(a, env)
		if err != nil {
			if i == 0 {
				return tmpl.Result{}, fmt.Errorf("agent prompt: %w", err)
			}
			return tmpl.Result{}, fmt.Errorf("tool fragment: %w", err)
		}
		for _, w := range r.Warnings {
			// Once per distinct message, across the prompt and fragments.
			if !slices.Contains(out.Warnings, w) {
				out.Warnings = append(out.Warnings, w)
			}
		}
		if t := strings.TrimSpace(r.Text); t != "" {
			parts = append(parts, t)
		}
	}
	out.Text = strings.Join(parts, "\n\n")
	return out, nil
}

// authored marks fragments, which ship with Quiver's tools, as authored.
func authored(frags []string) []tmpl.Authored {
	out := make([]tmpl.Authored, len(frags))
	for i, f := range frags {
		out[i] = tmpl.Author(f)
	}
	return out
}

// Env describes the turn to the template language. A capability is what
// the turn can do, not what a switch asks for:
//   - tool_use is on when the model supports tools, the switch is not set
//     off and selection gave the turn at least one tool (before any gate
//     narrowed it: Toolset.Selected);
//   - a switch that gates a tool family (web_search, self_teaching for
//     memory, ...; registry.SwitchFamily) is on exactly when a tool of
//     that family is declared, so capability:web_search and
//     tool_family:web_search always agree, and a switch with no tool
//     behind it is never on;
//   - time_awareness is on unless set off, as the context message
//     carries the time unless it is set off;
//   - every other switch (emoji_usage, personal_memories) is on when set on.
func Env(f turn.Facts, ts registry.Toolset) tmpl.Env {
	families := ts.Families()
	caps := map[string]bool{}
	for _, name := range tmpl.KnownCapabilities() {
		if fam := registry.SwitchFamily(name); fam != "" {
			caps[name] = families[fam]
			continue
		}
		caps[name] = f.Agent.Switch(name)
	}
	// Selection, not a gate, decides: a turn whose tools Deliberate Tool
	// Mode hides until asked for still has tools, and the prompt's
	// tool-use paragraph stays the same when they open.
	caps["tool_use"] = f.Model.Caps.Tools && !f.Agent.Off("tool_use") && ts.Selected() > 0
	caps[timeAwareness] = clockShown(f)
	tools := make(map[string]bool, ts.Len())
	for _, name := range ts.Names() {
		tools[name] = true
	}
	return tmpl.Env{Capabilities: caps, Tools: tools, Families: families, Macros: ts.Macros()}
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
