package tmpl

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Condition kinds.
const (
	KindCapability = "capability"
	KindTool       = "tool"
	KindFamily     = "tool_family"
)

// capabilities are the feature switches a {{if capability:NAME}} may name.
var capabilities = []string{
	"tool_use", "self_teaching", "personal_memories", "emoji_usage", "sticker_usage",
	"web_search", "manage_message", "thread_creation", "image_generation",
	"video_generation", "voice_message", "user_blocking", "short_term_memory", "shared_memory", "time_awareness",
	"budget", "conversation_search",
}

// baseFamilies are the tool families a {{if tool_family:NAME}} may always
// name, whether or not a tool of theirs exists in the catalog.
var baseFamilies = []string{"url_fetch", "web_search"}

// KnownCapabilities returns the capability names a condition may use.
func KnownCapabilities() []string { return slices.Clone(capabilities) }

type cond struct {
	neg        bool
	kind, name string
}

var condPattern = regexp.MustCompile(`(?i)^(!)?\s*(capability|tool|tool_family)\s*:\s*([a-z0-9][a-z0-9_.-]*)$`)

func parseCond(s string) (cond, error) {
	if s == "" {
		return cond{}, errors.New("empty condition")
	}
	m := condPattern.FindStringSubmatch(s)
	if m == nil {
		return cond{}, fmt.Errorf("cannot parse condition %q (write [!]capability:NAME, [!]tool:NAME or [!]tool_family:NAME)", s)
	}
	return cond{neg: m[1] != "", kind: strings.ToLower(m[2]), name: strings.ToLower(m[3])}, nil
}

func (c cond) String() string {
	neg := ""
	if c.neg {
		neg = "!"
	}
	return neg + c.kind + ":" + c.name
}

// eval returns the condition's value. An unknown name is false even when
// negated, and reported in warning.
func (c cond) eval(env Env) (ok bool, warning string) {
	var val, known bool
	switch c.kind {
	case KindCapability:
		known = slices.Contains(capabilities, c.name)
		val = env.Capabilities[c.name]
	case KindTool:
		known, val = true, env.Tools[c.name]
	case KindFamily:
		declared, inEnv := env.Families[c.name]
		known = inEnv || slices.Contains(baseFamilies, c.name)
		val = declared
	}
	if !known {
		return false, fmt.Sprintf("unknown %s %q in {{if %s}}; treated as false", strings.ReplaceAll(c.kind, "_", " "), c.name, c)
	}
	return val != c.neg, ""
}
