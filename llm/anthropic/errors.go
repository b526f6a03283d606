package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/quiverhq/quiver/llm"
)

// classify turns an error from the SDK into what the agent loop acts on.
// Cancellation stays a context error, whatever else went wrong meanwhile
// (an HTTP client's own timeout, with ctx alive, is a network error that
// may be retried); an *llm.Error passes unchanged; an API error (an HTTP error status,
// or an error event mid-stream) becomes an *llm.Error classified by status
// and error type; an event that is not JSON is a broken stream; anything
// else failed to reach the provider or to read from it. Messages are built
// from the provider's error message, never from request headers, so the
// key cannot leak.
func (m *Model) classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("anthropic: %w", ctxErr)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("anthropic: %w", err)
	}
	if e, ok := llm.AsError(err); ok {
		return e
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		return m.apiError(apiErr)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return &llm.Error{Kind: llm.ErrServer, Msg: "anthropic: malformed stream event: " + err.Error()}
	}
	return &llm.Error{Kind: llm.ErrNetwork, Msg: "anthropic: " + err.Error()}
}

// apiError classifies an error Anthropic answered. An error event inside a
// stream arrives with the stream's 200 status: it has no HTTP status of
// its own, and is a server-side failure unless its type says otherwise.
func (m *Model) apiError(e *anthropic.Error) *llm.Error {
	out := &llm.Error{Kind: llm.ErrServer, Msg: "anthropic: " + apiMessage(e)}
	if e.StatusCode >= 400 {
		out.Status = e.StatusCode
		out.Kind = llm.KindForStatus(e.StatusCode)
	}
	if e.Response != nil {
		out.RetryAfter = llm.ParseRetryAfter(e.Response.Header.Get("Retry-After"), m.now())
	}
	if k, ok := kindForType(string(e.Type()), e.Message); ok {
		out.Kind = k
	}
	return out
}

// kindForType refines the status's classification by the body's
// error.type, which says more (a 400 may mean the prompt is too long).
func kindForType(typ, msg string) (llm.ErrorKind, bool) {
	switch typ {
	case "rate_limit_error":
		return llm.ErrRateLimit, true
	case "overloaded_error":
		return llm.ErrOverloaded, true
	case "authentication_error", "permission_error":
		return llm.ErrAuth, true
	case "api_error":
		return llm.ErrServer, true
	case "invalid_request_error":
		if strings.Contains(strings.ToLower(msg), "prompt is too long") {
			return llm.ErrContextLength, true
		}
	}
	return "", false
}

func apiMessage(e *anthropic.Error) string {
	switch {
	case e.Message != "" && e.Type() != "":
		return fmt.Sprintf("%s: %s", e.Type(), e.Message)
	case e.Message != "":
		return e.Message
	case e.StatusCode >= 400:
		return http.StatusText(e.StatusCode)
	}
	return "error event in stream"
}
