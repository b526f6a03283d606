package gemini

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/quiverhq/quiver/llm"
)

// maxMsg bounds an error message: the SDK quotes whole stream chunks.
const maxMsg = 300

// statusCodes are the HTTP statuses of Google's canonical error codes, for
// an error body that names its status but no code.
var statusCodes = map[string]int{
	"INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 400, "OUT_OF_RANGE": 400,
	"UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403, "NOT_FOUND": 404,
	"ABORTED": 409, "ALREADY_EXISTS": 409, "RESOURCE_EXHAUSTED": 429, "CANCELLED": 499,
	"INTERNAL": 500, "UNKNOWN": 500, "DATA_LOSS": 500, "NOT_IMPLEMENTED": 501,
	"UNAVAILABLE": 503, "DEADLINE_EXCEEDED": 504,
}

// streamError classifies an error from the SDK. The context's own error
// is kept (wrapped) so errors.Is(err, context.Canceled) holds; everything
// else becomes an *llm.Error whose message never holds the key.
func (m *Model) streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("gemini: %w", ctx.Err())
	}
	if e, ok := asAPIError(err); ok {
		return m.apiError(e)
	}
	var urlErr *url.Error
	var netErr net.Error
	if errors.As(err, &urlErr) || errors.As(err, &netErr) {
		return &llm.Error{Kind: llm.ErrNetwork, Msg: m.message(err.Error())}
	}
	// A chunk that does not decode, or a body cut off mid-read.
	return &llm.Error{Kind: llm.ErrServer, Msg: m.message("broken stream: " + err.Error())}
}

func asAPIError(err error) (genai.APIError, bool) {
	var e genai.APIError
	if errors.As(err, &e) {
		return e, true
	}
	var p *genai.APIError
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return genai.APIError{}, false
}

// apiError classifies an error answer: by HTTP status, refined by Google's
// status name and details.
func (m *Model) apiError(e genai.APIError) *llm.Error {
	code := e.Code
	if code == 0 {
		code = statusCodes[e.Status]
	}
	return &llm.Error{
		Kind:       kind(code, e),
		Status:     code,
		RetryAfter: retryDelay(e.Details),
		Msg:        m.message(strings.TrimSpace(e.Status + " " + e.Message)),
	}
}

func kind(code int, e genai.APIError) llm.ErrorKind {
	switch e.Status {
	case "RESOURCE_EXHAUSTED":
		return llm.ErrRateLimit
	case "UNAVAILABLE":
		return llm.ErrOverloaded
	case "UNAUTHENTICATED", "PERMISSION_DENIED":
		return llm.ErrAuth
	case "INTERNAL":
		return llm.ErrServer
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION":
		switch {
		case tooLong(e.Message):
			return llm.ErrContextLength
		case badKey(e.Details):
			// Gemini answers a wrong key with 400 INVALID_ARGUMENT.
			return llm.ErrAuth
		}
	}
	return llm.KindForStatus(code)
}

// tooLong recognises Gemini's "the input token count (n) exceeds the
// maximum number of tokens allowed (m)" and payload-size answers.
func tooLong(msg string) bool {
	msg = strings.ToLower(msg)
	for _, s := range []string{"token count", "too long", "maximum number of tokens", "context length", "payload size exceeds"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// badKey finds an ErrorInfo detail whose reason is about the API key.
func badKey(details []map[string]any) bool {
	for _, d := range details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			if r, _ := d["reason"].(string); strings.HasPrefix(r, "API_KEY_") {
				return true
			}
		}
	}
	return false
}

// retryDelay reads the RetryInfo detail's retryDelay ("7s", "0.5s").
// The SDK keeps no response headers on errors, so a Retry-After header is
// out of reach; Gemini puts the same wait in RetryInfo.
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		t, _ := d["@type"].(string)
		if !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		if v, err := time.ParseDuration(s); err == nil && v > 0 {
			return v
		}
	}
	return 0
}

// message redacts the key and bounds the length.
func (m *Model) message(s string) string {
	s = redact(s, m.key)
	if len(s) > maxMsg {
		s = strings.ToValidUTF8(s[:maxMsg], "") + "…"
	}
	return s
}
