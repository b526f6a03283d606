// Package code provides run_code, the tool that runs model-written code
// in a sandbox (package sandbox and its levels) against the turn's
// workspace, with up to three stored tool results as inputs.
//
// run_code is not always on: a turn declares it only when the agent's
// allowlist names it (or its family, "code"), and only where its level
// can run: a level that cannot start on this machine (bubblewrap or the
// interpreter missing) leaves it out of every turn with that reason.
package code

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Family is run_code's family, the name an allowlist gives to admit it.
const Family = "code"

// The isolation levels a deployment chooses between (config code.level).
const (
	LevelJS     = "js"     // in-process JavaScript (sandbox/js), the default
	LevelPython = "python" // Python 3 under bubblewrap (sandbox/python)
)

// timeoutMargin is what a call may take beyond the script's wall limit:
// reading the inputs, copying the workspace, writing files back.
const timeoutMargin = 15 * time.Second

//go:embed run_code_js.md
var jsDescription string

//go:embed run_code_python.md
var pythonDescription string

// Config is what run_code runs on.
type Config struct {
	// Level is LevelJS or LevelPython: which description the model reads.
	// Empty means LevelJS.
	Level string
	// Runner runs the scripts; it must be the Level's runner. Nil leaves
	// the tool declared but every call failing with an infrastructure
	// error (for commands that declare tools and never dispatch).
	Runner sandbox.Runner
	// Unavailable, when not empty, says why the level cannot run here
	// ("bwrap not found (Debian bubblewrap)"): the tool is then left out
	// of every turn with that reason.
	Unavailable string
	// Limits bound each run; zero fields mean the level's defaults.
	Limits sandbox.Limits
	// Workspace is the workspaces' configuration (the workspace tools'
	// own): a script's files are read and written under its quotas.
	Workspace workspace.Config
	// Results is the store of tool results the inputs are read from, with
	// read_tool_result's scope (the turn's organisation and
	// conversation). Nil means no store: a call naming inputs fails with
	// store.ErrNoStore.
	Results store.Results
}

// Input is run_code's arguments.
type Input struct {
	Code   string   `json:"code" jsonschema:"the program's source"`
	Inputs []string `json:"inputs,omitempty" jsonschema:"stored tool result references (res_…) handed to the program by name, at most 3"`
}

// Tool returns run_code over cfg (family "code", Access Write: its
// scripts write files). It panics when cfg.Workspace.Root is empty or
// cfg.Level is unknown, as a misconfiguration found at start-up.
func Tool(cfg Config) *tool.Tool {
	if cfg.Workspace.Root == "" {
		panic("code: Config.Workspace.Root is empty")
	}
	desc, err := description(cfg.Level, cfg.Limits)
	if err != nil {
		panic(err.Error())
	}
	r := &runCode{cfg: cfg}
	return tool.New(tool.Spec{
		Name:        "run_code",
		Family:      Family,
		Macros:      []string{"code_tool"},
		Description: desc,
		Access:      tool.Write,
		Requires:    func(turn.Selection) string { return cfg.Unavailable },
		Timeout:     cfg.Limits.WithDefaults().Wall + timeoutMargin,
		Limits: []tool.Limit{
			{Name: "code_bytes", Value: sandbox.MaxCodeBytes},
			{Name: "inputs", Value: sandbox.MaxInputs},
			{Name: "input_bytes", Value: sandbox.MaxInputBytes},
			{Name: "wall_ms", Value: int(cfg.Limits.WithDefaults().Wall / time.Millisecond)},
			{Name: "output_bytes", Value: cfg.Limits.WithDefaults().OutputBytes},
		},
		Tune: func(s *jsonschema.Schema) {
			s.Properties["code"].MinLength = jsonschema.Ptr(1)
			s.Properties["code"].MaxLength = jsonschema.Ptr(sandbox.MaxCodeBytes)
			s.Properties["inputs"].MaxItems = jsonschema.Ptr(sandbox.MaxInputs)
		},
	}, r.run)
}

// description is the level's text with the limits in force.
func description(level string, l sandbox.Limits) (string, error) {
	var desc string
	switch level {
	case "", LevelJS:
		desc = jsDescription
	case LevelPython:
		desc = pythonDescription
	default:
		return "", fmt.Errorf("code: unknown level %q (use %s or %s)", level, LevelJS, LevelPython)
	}
	l = l.WithDefaults()
	memory := "bounded memory"
	if l.MemoryBytes != sandbox.DefaultMemoryBytes || level != LevelPython {
		memory = size(l.MemoryBytes) + " of memory"
	}
	limits := fmt.Sprintf("Limits: %v of wall time, %s, %s of output (printing more stops the program), up to %d inputs of %s each.",
		l.Wall, memory, size(int64(l.OutputBytes)), sandbox.MaxInputs, size(sandbox.MaxInputBytes))
	return strings.TrimSpace(desc) + "\n\n" + limits, nil
}

// runCode is run_code's handler state.
type runCode struct{ cfg Config }

func (r *runCode) run(ctx context.Context, s tool.Scope, in Input) (*Output, error) {
	if strings.TrimSpace(in.Code) == "" {
		return nil, errors.New("run_code: code is empty")
	}
	if r.cfg.Runner == nil {
		return nil, tool.Infra(errors.New("run_code: no sandbox runner configured"))
	}
	inputs, err := r.inputs(ctx, s, in.Inputs)
	if err != nil {
		return nil, err
	}
	job := sandbox.Job{Code: in.Code, Inputs: inputs, Limits: r.cfg.Limits}
	if err := job.Validate(); err != nil {
		return nil, fmt.Errorf("run_code: %w", err)
	}
	ws, err := workspace.Open(ctx, r.cfg.Workspace, s)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	rec := &recorder{ws: ws}
	job.Workspace = rec
	res, err := r.cfg.Runner.Run(ctx, job)
	if err != nil {
		return nil, tool.Infra(fmt.Errorf("run_code: %w", err))
	}
	return &Output{Result: res, Files: rec.files(), limit: job.Limits.WithDefaults().OutputBytes}, nil
}

// inputs reads the stored results refs names, as read_tool_result does:
// in the turn's organisation and conversation only, so a reference from
// another conversation or user is not found.
func (r *runCode) inputs(ctx context.Context, s tool.Scope, refs []string) ([]sandbox.Input, error) {
	if len(refs) > sandbox.MaxInputs {
		return nil, fmt.Errorf("run_code: %d inputs; the limit is %d", len(refs), sandbox.MaxInputs)
	}
	if len(refs) == 0 {
		return nil, nil
	}
	if r.cfg.Results == nil {
		return nil, tool.Infra(fmt.Errorf("run_code: %w", store.ErrNoStore))
	}
	out := make([]sandbox.Input, 0, len(refs))
	for _, ref := range refs {
		res, err := r.cfg.Results.GetResult(ctx, s.OrgID, s.ConversationID, ref)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("run_code: input %s: no such result in this conversation", ref)
		case errors.Is(err, store.ErrEvicted):
			return nil, fmt.Errorf("run_code: input %s: evicted (stored results passed their quota); run the tool again if you still need it", ref)
		case err != nil:
			return nil, tool.Infra(fmt.Errorf("run_code: input %s: %w", ref, err))
		}
		if len(res.Body) > sandbox.MaxInputBytes {
			return nil, fmt.Errorf("run_code: input %s is %d bytes; an input is at most %d bytes", ref, len(res.Body), sandbox.MaxInputBytes)
		}
		out = append(out, sandbox.Input{Name: ref, Content: res.Body})
	}
	return out, nil
}
