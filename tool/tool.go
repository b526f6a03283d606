// Package tool defines what a tool is to Quiver: a Spec that says what the
// model sees and when the tool may be offered, an input schema derived once
// from a Go type, and a handler that runs with a Scope taken from the turn.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/turn"
)

// DefaultTimeout bounds a call whose Spec sets no Timeout.
const DefaultTimeout = 30 * time.Second

// Access says whether a tool only reads or also changes state.
type Access int

const (
	// Read tools change nothing; a loop may run them concurrently.
	Read Access = iota
	// Write tools change state; a loop runs them in call order.
	Write
)

// String returns "read" or "write".
func (a Access) String() string {
	if a == Write {
		return "write"
	}
	return "read"
}

// Limit is a named hard limit a tool enforces, listed for people and docs.
type Limit struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
}

// Spec describes a tool. Name, Description and a handler are required; the
// zero value of every other field is documented on it.
type Spec struct {
	// Name is the function name the model calls: lower snake case for
	// built-in tools (New); NewRaw also accepts the names model providers
	// accept for imported tools (letters, digits, '_' and '-', at most 64).
	Name string
	// Family groups tools that an allowlist may name at once ("workspace",
	// "web_search"). Empty means the tool is its own family.
	Family string
	// Macros are the prompt macro keys that expand to this tool's name
	// ("memory_tool"). Nil means the tool has no macro.
	Macros []string
	// Description is what the model reads before deciding to call the tool:
	// what it does and, where that prevents a real mistake, when not to.
	Description string
	// Access is Read (the zero value) or Write.
	Access Access
	// AlwaysOn puts the tool in every turn whose model supports tools,
	// whatever the allowlist says. Always-on tools widen no permission.
	AlwaysOn bool
	// Switches are feature switches, besides the ones of its family, that
	// take the tool out of a turn when set off ("web_search" for
	// research_web, which searches the web too). The switch named like the
	// family, and the switch the registry's table gives the family, gate
	// it anyway. Nil means no others. Switches never gate AlwaysOn tools.
	Switches []string
	// Requires returns "" when the turn allows the tool, else a short
	// human-readable reason ("memory switch off"). It sees the part of the
	// facts that selects tools (turn.Selection), never who asks or when,
	// so a selection holds for every turn with the same Selection. Nil
	// means no requirement.
	Requires func(turn.Selection) string
	// Fragments are paragraphs the tool adds to the system prompt in turns
	// where it is selected. Identical fragments across tools appear once.
	Fragments []string
	// Limits lists the hard limits the handler enforces.
	Limits []Limit
	// Timeout bounds one call; zero means DefaultTimeout.
	Timeout time.Duration
	// Unstored keeps the result inline whatever its size: dispatch never
	// moves it to the result store. Set it only on a tool that bounds its own
	// output, such as read_tool_result, whose page would otherwise come back
	// as a new reference instead of the text asked for. False means a result
	// over the dispatcher's threshold is stored and referenced.
	Unstored bool
	// AllowAs lists the allowlist entries that admit the tool besides its
	// family: an MCP tool is admitted by "server/tool" and by "server/*".
	// A tool with AllowAs entries is not admitted by its bare name. Nil
	// means none (the name and family admit the tool).
	AllowAs []string
	// Origin names the tool behind an imported one: the MCP server and the
	// tool's own name there, which may differ from Name (the name the model
	// calls; see mcpclient.WireName). Inspectors show it; the handler
	// carries the real name itself. The zero value (no Server) means one
	// of Quiver's own tools.
	Origin Origin
	// Tune, when set, adjusts the schema inferred from the input type (enums,
	// bounds, defaults). It runs once, at construction.
	Tune func(*jsonschema.Schema)
}

// Origin is where an imported tool comes from.
type Origin struct {
	// Server is the registration name of the MCP server.
	Server string `json:"server"`
	// Tool is the tool's name as the server lists it.
	Tool string `json:"tool"`
}

// Scope is what a call may reach: turn.Scope, built by turn.Facts.Scope
// from the turn and never from the model's arguments.
type Scope = turn.Scope

// Pause asks the surface to stop the turn and put a question to the user.
type Pause struct {
	Question  string `json:"question"`
	Suggested string `json:"suggested,omitempty"`
}

// Checklist is the agent's own list of steps for the running turn, as
// update_tasks last set it. It lives in the turn only: no repository
// holds it (the call's record in the transcript and the turn's event log
// keep what they keep of every call).
type Checklist struct {
	Items []ChecklistItem `json:"items"`
}

// ChecklistItem is one step of a Checklist.
type ChecklistItem struct {
	Text string `json:"text"`
	// Status is ChecklistPending, ChecklistInProgress or ChecklistDone.
	Status string `json:"status"`
}

// Mark is the step's mark in text: [x] done, [>] in progress, [ ]
// pending.
func (it ChecklistItem) Mark() string {
	switch it.Status {
	case ChecklistDone:
		return "[x]"
	case ChecklistInProgress:
		return "[>]"
	}
	return "[ ]"
}

// A checklist item's statuses.
const (
	ChecklistPending    = "pending"
	ChecklistInProgress = "in_progress"
	ChecklistDone       = "completed"
)

// Effect is what a result asks of the loop or the surface besides being read
// by the model.
type Effect struct {
	// Pause, when set, ends the turn with a question to the user.
	Pause *Pause `json:"pause,omitempty"`
	// NextActions are follow-up suggestions for the surface to show.
	NextActions []string `json:"next_actions,omitempty"`
	// Checklist, when set, is the agent's checklist for the turn as it
	// now stands (update_tasks), for the surface to show in place of the
	// one before.
	Checklist *Checklist `json:"checklist,omitempty"`
	// Messages are changes the call made to messages where the
	// conversation happens (a reaction, a pin, an edit, a thread), for
	// the surface to show them live. Nil means none.
	Messages []MessageChange `json:"messages,omitempty"`
	// Declare names tools the call asks the loop to declare from the
	// next model step on, for the rest of the turn (Deliberate Tool
	// Mode's recovery, and later tool discovery). The loop declares only
	// the ones the turn's selection allowed, appended after the tools
	// already declared, and says in the call's result which it declared.
	Declare []string `json:"declare,omitempty"`
	// Declared, when set with Declare, is called by the loop once it has
	// declared at least one of Declare's tools, with those it added; never
	// when it added none (all declared already, none the selection
	// allowed, or the turn's cap on additions reached). What the call
	// keeps beyond the turn (enable_tools records the family open for the
	// conversation) belongs here, so that nothing is kept for a call that
	// opened nothing. An error is reported in the call's result; the tools
	// stay declared for the turn.
	Declared func(ctx context.Context, added []string) error `json:"-"`
}

// MessageChange is one change a message tool made (package surface's
// tools): what a surface that shows the conversation live redraws.
type MessageChange struct {
	// Action is "react", "unreact", "pin", "unpin", "edit", "delete",
	// "thread" or "post".
	Action string `json:"action"`
	// Conversation is the conversation (or channel) changed, Message the
	// message's id there ("" for a post's new message, see Message).
	Conversation string `json:"conversation"`
	Message      string `json:"message,omitempty"`
	// Emoji is a reaction's; Text an edit's or a post's new text.
	Emoji string `json:"emoji,omitempty"`
	Text  string `json:"text,omitempty"`
	// Thread is the conversation a "thread" change started.
	Thread string `json:"thread,omitempty"`
}

// Result is what a call returns to the model.
type Result struct {
	// Content is the text the model reads.
	Content string
	// IsError marks a result that reports a failure to the model.
	IsError bool
	// Ref names the stored full body ("res_…") when Content was truncated.
	Ref string
	// Effect carries requests to the loop and surface.
	Effect Effect
	// Images go to the model with Content when it has vision (a
	// screenshot of a rendered artifact); a model without vision reads
	// Content alone, which must stand on its own. Dispatch keeps at most
	// MaxResultImages, each at most MaxImageBytes, and says in Content
	// what it dropped. They live in the running turn only: the stored
	// result is Content.
	Images []Image
}

// Image is an image a tool result carries (llm.Image is this type).
type Image struct {
	MIME string // "image/png", "image/jpeg", ...
	Data []byte
}

// Bounds of a result's images.
const (
	MaxResultImages = 4
	MaxImageBytes   = 5 << 20
)

// Handler is the raw form of a tool's code: arguments arrive validated
// against the tool's schema.
type Handler func(ctx context.Context, s Scope, args json.RawMessage) (Result, error)

// Tool is a registered tool: its spec, its resolved input schema and its
// handler. A Tool is immutable and safe for concurrent use.
type Tool struct {
	spec     Spec
	schema   json.RawMessage
	resolved *jsonschema.Resolved
	// bounds counts the validation work of a schema with references; nil
	// when it has none.
	bounds  *refBounds
	handler Handler
	// decl is the provider-neutral declaration and declChars its size in
	// characters, computed once: sizes are accounted on every turn.
	decl      json.RawMessage
	declChars int
}

// namePattern is the name of a built-in tool; rawNamePattern the wider one
// that every provider accepts, for tools imported at run time.
var (
	namePattern    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	rawNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

// ValidRawName reports whether name can be the name of a tool built with
// NewRaw: every model provider accepts it.
func ValidRawName(name string) bool { return rawNamePattern.MatchString(name) }

// NewRaw builds a tool from an explicit object schema, for tools whose schema
// is only known at run time (MCP imports, tests). It panics on a programming
// error: an invalid name, a missing description, or a schema that is not an
// object schema or does not resolve. Use [Import] for schemas that come
// from outside the program.
func NewRaw(spec Spec, schema *jsonschema.Schema, h Handler) *Tool {
	t, err := Import(spec, schema, h)
	if err != nil {
		panic(err.Error())
	}
	return t
}

// Import is NewRaw returning an error instead of panicking, for tools whose
// name and schema were discovered at run time (an MCP server's). schema is
// modified (simplified and tuned); pass a copy when it is shared.
func Import(spec Spec, schema *jsonschema.Schema, h Handler) (*Tool, error) {
	if !rawNamePattern.MatchString(spec.Name) {
		return nil, fmt.Errorf("tool: invalid name %q", spec.Name)
	}
	if spec.Description == "" || h == nil {
		return nil, fmt.Errorf("tool %s: description and handler are required", spec.Name)
	}
	if schema == nil || schema.Type != "object" {
		return nil, fmt.Errorf("tool %s: input schema must be an object schema", spec.Name)
	}
	simplify(schema)
	if spec.Tune != nil {
		spec.Tune(schema)
	}
	bounds, err := newRefBounds(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %v", spec.Name, err)
	}
	if err := bounds.checkDefaults(); err != nil {
		return nil, fmt.Errorf("tool %s: %v", spec.Name, err)
	}
	resolved, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, fmt.Errorf("tool %s: resolve schema: %v", spec.Name, err)
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: marshal schema: %v", spec.Name, err)
	}
	if spec.Timeout <= 0 {
		spec.Timeout = DefaultTimeout
	}
	spec.Description = strings.TrimSpace(spec.Description)
	decl, err := json.Marshal(Declaration{Name: spec.Name, Description: spec.Description, Parameters: raw})
	if err != nil {
		return nil, fmt.Errorf("tool %s: marshal declaration: %v", spec.Name, err)
	}
	return &Tool{spec: spec, schema: raw, resolved: resolved, bounds: bounds, handler: h, decl: decl, declChars: utf8.RuneCount(decl)}, nil
}

// Declaration is a tool as declared to a model, in provider-neutral form.
// Its JSON serialisation is what definition sizes and ceilings measure.
type Declaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Declaration returns the tool's declaration. Parameters shares the tool's
// schema bytes: do not modify them.
func (t *Tool) Declaration() Declaration {
	return Declaration{Name: t.spec.Name, Description: t.spec.Description, Parameters: t.schema}
}

// DeclarationChars is the size, in characters (code points), of the tool's
// serialised declaration.
func (t *Tool) DeclarationChars() int { return t.declChars }

// Spec returns the tool's spec (with Timeout defaulted and Description
// trimmed).
func (t *Tool) Spec() Spec { return t.spec }

// Name returns the tool's function name.
func (t *Tool) Name() string { return t.spec.Name }

// AlwaysOn reports Spec().AlwaysOn, without copying the spec.
func (t *Tool) AlwaysOn() bool { return t.spec.AlwaysOn }

// Family returns the tool's family, or its name when it has none.
func (t *Tool) Family() string {
	if t.spec.Family == "" {
		return t.spec.Name
	}
	return t.spec.Family
}

// Schema returns the serialised input schema. The bytes are shared: do not
// modify them.
func (t *Tool) Schema() json.RawMessage { return t.schema }

// Run validates args against the schema and runs the handler. Invalid
// arguments give an *ArgError. Run applies no timeout and recovers no panic:
// that is dispatch's job.
func (t *Tool) Run(ctx context.Context, s Scope, args json.RawMessage) (Result, error) {
	b, err := t.Bind(args)
	if err != nil {
		return Result{}, err
	}
	return b.Run(ctx, s)
}

// Bound is a call of a tool whose arguments its schema accepted, ready to
// run: Run in two steps, so that a caller can validate on one goroutine
// and run the handler on another (dispatch does). The zero Bound is not a
// call; Run panics on it.
type Bound struct {
	t    *Tool
	args json.RawMessage
}

// Bind validates args as Run does (Validate) and returns the call with
// the normalised arguments. Invalid arguments give an *ArgError.
func (t *Tool) Bind(args json.RawMessage) (Bound, error) {
	norm, err := t.Validate(args)
	if err != nil {
		return Bound{}, err
	}
	return Bound{t: t, args: norm}, nil
}

// Run runs the handler on the bound arguments, with no timeout and no
// recovery from a panic, as Tool.Run.
func (b Bound) Run(ctx context.Context, s Scope) (Result, error) {
	return b.t.handler(ctx, s, b.args)
}

// simplify rewrites the nullable types that inference gives slices, maps and
// pointers (["null","array"]) to the plain type: models omit optional fields
// rather than send null, and every byte of a definition is paid on each call.
func simplify(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		simplify(p)
	}
	simplify(s.Items)
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
		simplify(s.AdditionalProperties)
	}
}
