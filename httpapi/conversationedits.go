package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
)

func (s *server) conversationEditRoutes() {
	tags := []string{"conversations"}
	register(s, huma.Operation{
		OperationID: "update-conversation", Method: http.MethodPatch, Path: "/api/conversations/{id}", Tags: tags,
		Summary: "Rename a conversation or choose its model",
		Description: "Only the fields given change; updated_at does not (renaming is not activity). The title is trimmed " +
			"and must then hold 1–200 characters and no control character (400 invalid_title). The model must be one of " +
			"GET .../models with connected true (400 model_not_allowed); \"\" goes back to the agent's own. " +
			"Another user's conversation is as absent as a missing one (404).",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.updateConversation)
	register(s, huma.Operation{
		OperationID: "delete-conversation", Method: http.MethodDelete, Path: "/api/conversations/{id}", Tags: tags,
		Summary: "Delete a conversation and everything recorded under it",
		Description: "In one transaction: the conversation, its messages, turns (what the inspector shows), turn events, " +
			"stored tool results, attached files and Deliberate Tool Mode's open families. Usage records stay, detached " +
			"from it (they are what was spent, and budgets are summed from them). Files the agent wrote in the user's " +
			"workspace are the user's, not the conversation's, and stay. 409 turn_running while a turn of it runs " +
			"(cancel it first); 404 for another user's or a missing one.",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound, http.StatusConflict},
	}, signedIn, s.deleteConversation)
	register(s, huma.Operation{
		OperationID: "list-conversation-models", Method: http.MethodGet, Path: "/api/conversations/{id}/models", Tags: tags,
		Summary: "The models the conversation may run on",
		Description: "Its agent's own model first, then the others the agent offers (its models list), each with whether " +
			"the organisation's settings connect it; model is the one its next turn runs on.",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.conversationModels)
	register(s, huma.Operation{
		OperationID: "list-agent-models", Method: http.MethodGet, Path: "/api/agents/{name}/models", Tags: []string{"agents"},
		Summary: "The models a new conversation with the agent may run on",
		Description: "As GET /api/conversations/{id}/models, for a conversation not started yet (the model field of " +
			"its first message).",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.agentModels)
}

type updateConversationInput struct {
	ID   string `path:"id"`
	Body struct {
		Title *string `json:"title,omitempty" maxLength:"400" doc:"The new title: trimmed, then 1–200 characters without control characters."`
		Model *string `json:"model,omitempty" maxLength:"300" doc:"The provider:model to run on, one the agent offers and the organisation connects; \"\" for the agent's own."`
	}
}

func (s *server) updateConversation(ctx context.Context, in *updateConversationInput) (*conversationOutput, error) {
	a := authFrom(ctx)
	c, err := s.ownConversation(ctx, a, in.ID)
	if err != nil {
		return nil, err
	}
	u := store.ConversationUpdate{Model: in.Body.Model}
	if in.Body.Title == nil && in.Body.Model == nil {
		return nil, apiErr(http.StatusBadRequest, "invalid_request", "nothing to change: give title, model or both")
	}
	if in.Body.Title != nil {
		t, err := checkTitle(*in.Body.Title)
		if err != nil {
			return nil, err
		}
		u.Title = &t
	}
	if m := in.Body.Model; m != nil && *m != "" {
		if err := s.eng.CheckModel(ctx, a.Caller, c.Agent, *m); err != nil {
			return nil, modelRefused(err)
		}
	}
	c, err = s.st.UpdateConversation(ctx, a.OrgID, a.UserID, in.ID, u)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no such conversation")
	}
	if err != nil {
		return nil, err
	}
	return &conversationOutput{Body: s.conversationView(c)}, nil
}

// checkTitle is a title a person gave, trimmed, or the 400 that says why
// it cannot be one: empty, too long, or holding a control character
// (store.TitleControl), which a person's title is refused for rather
// than silently cleaned.
func checkTitle(title string) (string, error) {
	t := strings.TrimSpace(title)
	switch {
	case t == "":
		return "", apiErr(http.StatusBadRequest, "invalid_title", "the title is empty")
	case store.TitleControl(t):
		return "", apiErr(http.StatusBadRequest, "invalid_title", "the title holds a control character (a line break, a tab, a NUL, a direction override); write it on one line")
	case len([]rune(t)) > store.MaxTitleRunes:
		return "", apiErr(http.StatusBadRequest, "invalid_title", "the title is longer than 200 characters")
	}
	return t, nil
}

// modelRefused is the Engine's refusal of a model as the API answers it:
// 400 model_not_allowed with its message; anything else as it is.
func modelRefused(err error) error {
	var ie *engine.InputError
	var br *BadRequest
	switch {
	case errors.As(err, &ie):
		return apiErr(http.StatusBadRequest, "model_not_allowed", ie.Msg)
	case errors.As(err, &br):
		return apiErr(http.StatusBadRequest, "model_not_allowed", br.Msg)
	}
	return err
}

type deleteConversationOutput struct{}

func (s *server) deleteConversation(ctx context.Context, in *conversationPath) (*deleteConversationOutput, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	// The store refuses too, in the delete's transaction; asking first
	// answers the common case without writing.
	if _, running, err := s.runs.Running(ctx, a.OrgID, in.ID); err != nil || running {
		if err == nil {
			err = errDeleteRunning
		}
		return nil, err
	}
	switch err := s.st.DeleteConversation(ctx, a.OrgID, a.UserID, in.ID); {
	case errors.Is(err, store.ErrNotFound):
		return nil, notFound("no such conversation")
	case errors.Is(err, store.ErrTurnRunning):
		return nil, errDeleteRunning
	case err != nil:
		return nil, err
	}
	return &deleteConversationOutput{}, nil
}

var errDeleteRunning = apiErr(http.StatusConflict, "turn_running", "a turn of this conversation is running; cancel it (POST .../cancel) or wait, then delete")

// ModelChoice is one model a conversation may run on.
type ModelChoice struct {
	Model     string `json:"model" doc:"provider:model"`
	Default   bool   `json:"default" doc:"The agent's own model, which a conversation that chose none runs on."`
	Connected bool   `json:"connected" doc:"The organisation's settings connect it; a model that is not connected cannot be chosen."`
	Help      string `json:"help,omitempty" doc:"When not connected: why, and how to connect it."`
}

type modelsOutput struct {
	Body struct {
		Models []ModelChoice `json:"models"`
		Model  string        `json:"model" doc:"The model the next turn runs on: the conversation's choice, else the agent's own."`
	}
}

func (s *server) conversationModels(ctx context.Context, in *conversationPath) (*modelsOutput, error) {
	a := authFrom(ctx)
	c, err := s.ownConversation(ctx, a, in.ID)
	if err != nil {
		return nil, err
	}
	return s.modelChoices(ctx, a, c.Agent, c.Model)
}

func (s *server) agentModels(ctx context.Context, in *agentPath) (*modelsOutput, error) {
	a := authFrom(ctx)
	if _, err := s.orgAgent(ctx, a, in.Name); err != nil {
		return nil, err
	}
	return s.modelChoices(ctx, a, in.Name, "")
}

// modelChoices lists the agent's models; chosen is the conversation's
// choice ("" for none), answered as the model in force when the agent
// still offers it.
func (s *server) modelChoices(ctx context.Context, a *auth, agentName, chosen string) (*modelsOutput, error) {
	cs, err := s.eng.ModelChoices(ctx, a.Caller, agentName)
	if err != nil {
		return nil, err
	}
	out := &modelsOutput{}
	out.Body.Models = make([]ModelChoice, 0, len(cs))
	for _, c := range cs {
		out.Body.Models = append(out.Body.Models, ModelChoice{Model: c.Ref, Default: c.Default, Connected: c.Connected, Help: c.Help})
		if c.Default && out.Body.Model == "" || c.Ref == chosen {
			out.Body.Model = c.Ref
		}
	}
	return out, nil
}
