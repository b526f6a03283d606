// Package config loads and validates Quiver's configuration files: agent
// definitions now, the server configuration later. Loading never writes.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/turn"
	"go.yaml.in/yaml/v3"
)

// MaxAgentFileBytes bounds an agent file.
const MaxAgentFileBytes = 1 << 20

// Agent is an agent definition as written in YAML. See
// examples/agents/assistant.yaml for a documented example.
type Agent struct {
	// Name identifies the agent: lower case letters, digits, '-' and '_'.
	Name string `yaml:"name"`
	// Model is a "provider:model" reference; empty means DefaultModel.
	Model string `yaml:"model"`
	// Models are the other "provider:model" references a person may pick
	// for a conversation with the agent (the web UI's model picker); the
	// organisation must have each one's provider connected. At most
	// MaxAgentModels, none repeated; Capabilities apply to each.
	Models []string `yaml:"models"`
	// Capabilities override what the model can do; unset fields default to
	// tools on, everything else off.
	Capabilities *Capabilities `yaml:"capabilities"`
	// Prompt is the authored system prompt.
	Prompt string `yaml:"prompt"`
	// Tools is the allowlist of optional tools or whole families.
	Tools []string `yaml:"tools"`
	// Switches are feature switches ("web_search", "time_awareness", ...):
	// one named like a tool family takes it out when false; see
	// docs/settings.md. An unset switch follows the organisation's.
	Switches map[string]bool `yaml:"switches"`
	// Deliberate overrides the organisation's Deliberate Tool Mode
	// settings for this agent; nil (or an unset field) keeps them.
	Deliberate *Deliberate `yaml:"deliberate_tool_mode"`
}

// Deliberate is an agent's Deliberate Tool Mode override.
type Deliberate struct {
	// Enabled turns the mode on or off for the agent's turns; each user's
	// own "on"/"off" override still applies.
	Enabled *bool `yaml:"enabled"`
	// HistoryTurns is how many recent user messages are re-scanned, 0–10.
	HistoryTurns *int `yaml:"history_turns"`
}

// Capabilities is the YAML form of turn.Capabilities.
type Capabilities struct {
	Tools            *bool `yaml:"tools"`
	ParallelTools    bool  `yaml:"parallel_tools"`
	Vision           bool  `yaml:"vision"`
	Video            bool  `yaml:"video"`
	StructuredOutput bool  `yaml:"structured_output"`
}

// DefaultModel is the model an agent file without one runs on.
const DefaultModel = "openai:gpt-4.1-mini"

var (
	agentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	entryName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	// mcpEntry names one tool of a registered MCP server ("server/tool")
	// or all of them ("server/*").
	mcpEntry = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9-]{0,31}/([a-zA-Z0-9_-]{1,64}|\*)$`)
)

// LoadAgent reads and validates an agent file. Unknown keys, a malformed
// model reference or allowlist entry, and an empty name are errors that name
// the file.
func LoadAgent(path string) (Agent, error) {
	return load(path, "agent file", MaxAgentFileBytes, ParseAgent)
}

// load reads a YAML file of at most limit bytes and parses it, naming the
// file (as what) in every error.
func load[T any](path, what string, limit int, parse func([]byte) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if len(data) > limit {
		return zero, fmt.Errorf("%s %s: larger than %d bytes", what, path, limit)
	}
	v, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return v, nil
}

// ParseAgent decodes and validates one agent definition.
func ParseAgent(data []byte) (Agent, error) {
	var a Agent
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		if errors.Is(err, io.EOF) {
			return Agent{}, errors.New("empty agent definition")
		}
		return Agent{}, yamlError(err)
	}
	if a.Model == "" {
		a.Model = DefaultModel
	}
	return a, a.Validate()
}

// Validate checks every field and returns the first problem found.
func (a Agent) Validate() error {
	if !agentName.MatchString(a.Name) {
		return fmt.Errorf("name %q: use 1–64 lower-case letters, digits, '-' or '_'", a.Name)
	}
	if _, err := ParseModelRef(a.Model); err != nil {
		return err
	}
	if err := a.validateModels(); err != nil {
		return err
	}
	for i, e := range a.Tools {
		if !entryName.MatchString(e) && !mcpEntry.MatchString(e) {
			return fmt.Errorf("tools[%d] %q: not a tool or family name, nor an MCP server's server/tool or server/*", i, e)
		}
	}
	for k := range a.Switches {
		if !entryName.MatchString(k) {
			return fmt.Errorf("switches: %q is not a switch name", k)
		}
	}
	if d := a.Deliberate; d != nil && d.HistoryTurns != nil && (*d.HistoryTurns < 0 || *d.HistoryTurns > MaxDeliberateHistory) {
		return fmt.Errorf("deliberate_tool_mode.history_turns: %d is outside 0–%d", *d.HistoryTurns, MaxDeliberateHistory)
	}
	return nil
}

// MaxAgentModels bounds an agent's models list.
const MaxAgentModels = 20

// validateModels checks the models list: references, at most
// MaxAgentModels, none repeated nor the agent's own model.
func (a Agent) validateModels() error {
	if len(a.Models) > MaxAgentModels {
		return fmt.Errorf("models: %d entries, at most %d", len(a.Models), MaxAgentModels)
	}
	seen := map[string]bool{a.Model: true}
	for i, ref := range a.Models {
		if _, err := ParseModelRef(ref); err != nil {
			return fmt.Errorf("models[%d]: %w", i, err)
		}
		if seen[ref] {
			return fmt.Errorf("models[%d] %q: listed twice (the agent's own model is always offered)", i, ref)
		}
		seen[ref] = true
	}
	return nil
}

// TurnModels returns the agent's model (TurnModel("")) and the models of
// Models, in order, all with the agent's capabilities.
func (a Agent) TurnModels() (turn.Model, []turn.Model, error) {
	own, err := a.TurnModel("")
	if err != nil {
		return turn.Model{}, nil, err
	}
	others := make([]turn.Model, 0, len(a.Models))
	for _, ref := range a.Models {
		m, err := a.TurnModel(ref)
		if err != nil {
			return turn.Model{}, nil, err
		}
		others = append(others, m)
	}
	return own, others, nil
}

// MaxDeliberateHistory bounds deliberate_tool_mode.history_turns (the
// intent package's MaxHistoryTurns).
const MaxDeliberateHistory = 10

// ParseModelRef splits "provider:model" at the first colon, so model names
// may hold colons themselves ("ollama:qwen3:8b").
func ParseModelRef(ref string) (turn.Model, error) {
	provider, name, ok := strings.Cut(ref, ":")
	if !ok || !entryName.MatchString(provider) || strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\n") {
		return turn.Model{}, fmt.Errorf("model %q: write it as provider:model, e.g. openai:gpt-4.1-mini", ref)
	}
	return turn.Model{Provider: provider, Name: name}, nil
}

// TurnAgent returns the agent as turn facts see it.
func (a Agent) TurnAgent() turn.Agent {
	sw := make(map[string]bool, len(a.Switches))
	for k, v := range a.Switches {
		sw[k] = v
	}
	out := turn.Agent{
		Name:     a.Name,
		Prompt:   tmpl.Author(a.Prompt),
		Allow:    append([]string(nil), a.Tools...),
		Switches: sw,
	}
	if d := a.Deliberate; d != nil {
		if d.Enabled != nil {
			on := *d.Enabled
			out.Deliberate.Enabled = &on
		}
		if d.HistoryTurns != nil {
			h := *d.HistoryTurns
			out.Deliberate.HistoryTurns = &h
		}
	}
	return out
}

// TurnModel returns the agent's model (or override, when non-empty) with
// its capabilities. Tool support defaults to on.
func (a Agent) TurnModel(override string) (turn.Model, error) {
	ref := a.Model
	if override != "" {
		ref = override
	}
	m, err := ParseModelRef(ref)
	if err != nil {
		return turn.Model{}, err
	}
	m.Caps.Tools = true
	if c := a.Capabilities; c != nil {
		if c.Tools != nil {
			m.Caps.Tools = *c.Tools
		}
		m.Caps.ParallelTools, m.Caps.Vision, m.Caps.Video, m.Caps.StructuredOutput = c.ParallelTools, c.Vision, c.Video, c.StructuredOutput
	}
	return m, nil
}

var unknownKey = regexp.MustCompile(`field (\S+) not found in type \S+`)

// yamlError flattens a YAML decoding error to one line, naming unknown keys
// as such.
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = unknownKey.ReplaceAllString(strings.Join(strings.Fields(m), " "), `unknown key "$1"`)
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return fmt.Errorf("invalid YAML: %s", strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: ")), " "))
}
