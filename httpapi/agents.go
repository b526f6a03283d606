package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
)

func (s *server) agentRoutes() {
	tags := []string{"agents"}
	register(s, huma.Operation{
		OperationID: "list-agents", Method: http.MethodGet, Path: "/api/agents", Tags: tags,
		Summary: "The organisation's agents, by name",
	}, signedIn, s.listAgents)
	register(s, huma.Operation{
		OperationID: "get-agent", Method: http.MethodGet, Path: "/api/agents/{name}", Tags: tags,
		Summary: "An agent with its definition",
		Errors:  []int{http.StatusNotFound},
	}, signedIn, s.getAgent)
	register(s, huma.Operation{
		OperationID: "put-agent", Method: http.MethodPut, Path: "/api/agents/{name}", Tags: tags,
		Summary: "Create or replace an agent",
		Description: "The definition is the agent's YAML. It is parsed and its prompt rendered once before anything " +
			"is stored; its name must equal the path's. Returns the template's warnings and the allowlist's (unknown tool or " +
			"family names with the closest known one, MCP servers the organisation has not registered, repeated entries); " +
			"warnings do not stop the save. 201 when created, 200 when replaced.",
	}, adminOnly, s.putAgent)
	register(s, huma.Operation{
		OperationID: "delete-agent", Method: http.MethodDelete, Path: "/api/agents/{name}", Tags: tags,
		Summary:       "Delete an agent",
		Description:   "Its conversations remain; new turns in them fail until an agent of that name exists again.",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound},
	}, adminOnly, s.deleteAgent)
	register(s, huma.Operation{
		OperationID: "get-model-status", Method: http.MethodGet, Path: "/api/agents/{name}/model-status", Tags: tags,
		Summary: "Whether the agent's model is connected",
		Description: "Judged from the configured keys: nothing is sent to a model provider, except a probe of the local " +
			"Ollama when no provider is configured at all. When not connected, help says how to connect one.",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.modelStatus)
}

// AgentSummary is an agent as listed.
type AgentSummary struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Agent is an agent with its authored definition.
type Agent struct {
	Name       string    `json:"name"`
	Definition string    `json:"definition" doc:"The agent's YAML, as authored."`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	Warnings   []string  `json:"warnings,omitempty" doc:"The template's warnings (PUT only)."`
	// AllowlistWarnings are the allowlist's and switches' warnings (PUT
	// only; see registry.Warning.Field).
	AllowlistWarnings []registry.Warning `json:"allowlist_warnings,omitempty" doc:"The allowlist's and switches' warnings (PUT only): entries that name no tool, family or registered MCP server (with the closest name that does, when one is close), or are repeated; and, with field \"switches\", switches that change nothing. The agent is saved all the same."`
}

type agentsOutput struct {
	Body struct {
		Agents []AgentSummary `json:"agents"`
	}
}

func (s *server) listAgents(ctx context.Context, _ *struct{}) (*agentsOutput, error) {
	a := authFrom(ctx)
	as, err := s.st.ListAgents(ctx, a.OrgID)
	if err != nil {
		return nil, err
	}
	out := &agentsOutput{}
	out.Body.Agents = make([]AgentSummary, 0, len(as))
	for _, ag := range as {
		out.Body.Agents = append(out.Body.Agents, AgentSummary{Name: ag.Name, CreatedAt: ag.CreatedAt, UpdatedAt: ag.UpdatedAt})
	}
	return out, nil
}

type agentPath struct {
	Name string `path:"name" doc:"The agent's name."`
}

type agentOutput struct {
	Status int
	Body   Agent
}

func agentView(ag store.StoredAgent) Agent {
	return Agent{Name: ag.Name, Definition: string(ag.Definition), CreatedAt: ag.CreatedAt, UpdatedAt: ag.UpdatedAt}
}

func (s *server) getAgent(ctx context.Context, in *agentPath) (*agentOutput, error) {
	a := authFrom(ctx)
	ag, err := s.orgAgent(ctx, a, in.Name)
	if err != nil {
		return nil, err
	}
	return &agentOutput{Status: http.StatusOK, Body: agentView(ag)}, nil
}

// orgAgent returns the caller's organisation's agent of that name; one of
// another organisation is as absent as a missing one.
func (s *server) orgAgent(ctx context.Context, a *auth, name string) (store.StoredAgent, error) {
	ag, err := s.st.GetAgent(ctx, a.OrgID, name)
	if errors.Is(err, store.ErrNotFound) {
		return ag, notFound("no such agent")
	}
	return ag, err
}

type modelStatusOutput struct{ Body ModelStatus }

func (s *server) modelStatus(ctx context.Context, in *agentPath) (*modelStatusOutput, error) {
	a := authFrom(ctx)
	if _, err := s.orgAgent(ctx, a, in.Name); err != nil {
		return nil, err
	}
	st, err := s.eng.ModelStatus(ctx, a.Caller, in.Name)
	if err != nil {
		return nil, err
	}
	return &modelStatusOutput{Body: st}, nil
}

type putAgentInput struct {
	Name string `path:"name"`
	Body struct {
		Definition string `json:"definition" minLength:"1" doc:"The agent's YAML."`
	}
}

func (s *server) putAgent(ctx context.Context, in *putAgentInput) (*agentOutput, error) {
	a := authFrom(ctx)
	def := []byte(in.Body.Definition)
	checked, err := s.eng.ValidateAgent(ctx, a.Caller, def)
	if err != nil {
		var br *BadRequest
		if errors.As(err, &br) {
			return nil, apiErr(http.StatusBadRequest, "invalid_agent", br.Msg)
		}
		return nil, err // reading the organisation's settings failed
	}
	name := checked.Name
	if name != in.Name {
		return nil, apiErr(http.StatusBadRequest, "name_mismatch",
			"the definition names the agent "+strconv.Quote(name)+", the path "+strconv.Quote(in.Name))
	}
	status := http.StatusOK
	if _, err := s.st.GetAgent(ctx, a.OrgID, name); errors.Is(err, store.ErrNotFound) {
		status = http.StatusCreated
	} else if err != nil {
		return nil, err
	}
	now := s.now()
	if err := s.st.PutAgent(ctx, store.StoredAgent{OrgID: a.OrgID, Name: name, Definition: def, CreatedAt: now, UpdatedAt: now}); err != nil {
		return nil, err
	}
	stored, err := s.st.GetAgent(ctx, a.OrgID, name)
	if err != nil {
		return nil, err
	}
	v := agentView(stored)
	v.Warnings, v.AllowlistWarnings = checked.Warnings, checked.Allowlist
	return &agentOutput{Status: status, Body: v}, nil
}

func (s *server) deleteAgent(ctx context.Context, in *agentPath) (*struct{}, error) {
	a := authFrom(ctx)
	if err := s.st.DeleteAgent(ctx, a.OrgID, in.Name); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("no such agent")
		}
		return nil, err
	}
	return nil, nil
}
