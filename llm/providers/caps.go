package providers

import (
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/turn"
)

// Effective returns the capabilities a turn on m runs with, from the
// agent's declaration and what m reports (m.Capabilities).
//
// The rule: a capability is on when the agent declares it and m reports
// it. Either side can only take a capability away, never add one: an
// agent that declares tools on a model that reports none gets no tools
// (selection then leaves every tool out, each with the reason "model P:M
// does not support tool calling"), and a model's defaults never turn on
// what the agent turned off. Parallel tool calls also need tools.
//
// A nil m (no model opened, as for a dry run with no provider connected)
// leaves declared as it is.
func Effective(declared turn.Capabilities, m llm.Model) turn.Capabilities {
	if m == nil {
		return declared
	}
	r := m.Capabilities()
	out := turn.Capabilities{
		Tools:            declared.Tools && r.Tools,
		ParallelTools:    declared.ParallelTools && r.ParallelTools,
		Vision:           declared.Vision && r.Vision,
		Video:            declared.Video && r.Video,
		StructuredOutput: declared.StructuredOutput && r.StructuredOutput,
	}
	out.ParallelTools = out.ParallelTools && out.Tools
	out.DeferredTools = r.DeferredTools && out.Tools
	return out
}
