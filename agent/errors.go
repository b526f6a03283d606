package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/llm"
)

// userMessage says what went wrong in one sentence a person can act on,
// never with a stack trace, a key or a raw provider body.
func userMessage(err error) string {
	if errors.Is(err, context.Canceled) {
		return "The turn was cancelled."
	}
	if tl, ok := errors.AsType[*timeLimitError](err); ok {
		return fmt.Sprintf("The turn took longer than its limit of %s and was stopped; what it did so far is saved.", tl.limit)
	}
	e, ok := llm.AsError(err)
	if !ok {
		return "Something went wrong inside Quiver; the turn was saved up to the failure."
	}
	switch e.Kind {
	case llm.ErrRateLimit:
		if e.RetryAfter > 0 {
			return fmt.Sprintf("The model provider is rate-limiting requests; try again in %s.", e.RetryAfter.Round(1e9))
		}
		return "The model provider is rate-limiting requests; try again in a minute."
	case llm.ErrOverloaded, llm.ErrServer:
		return "The model provider is having trouble right now; try again shortly."
	case llm.ErrTimeout:
		return "The model provider stopped responding in the middle of the reply (" + e.Msg + "); try again shortly."
	case llm.ErrNetwork:
		return "Quiver could not reach the model provider; check the network and the provider's base URL."
	case llm.ErrAuth:
		return "The model provider refused the API key; check the key configured for this provider."
	case llm.ErrContextLength:
		return "The conversation is too long for this model; start a new conversation or use a model with a larger context."
	case llm.ErrUnsupportedTool:
		return "The model cannot take one of this agent's tools; check the agent's tools for this model."
	}
	return "The model provider rejected the request: " + e.Msg
}
