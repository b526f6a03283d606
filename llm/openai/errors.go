package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/netguard"
)

// classify turns a failed call into an *llm.Error. A cancelled or expired
// ctx wins over whatever the transport made of it, and stays an error that
// wraps ctx.Err(). res is the HTTP response, nil when none arrived.
func (m *Model) classify(ctx context.Context, err error, res *http.Response) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai: %w", ctx.Err())
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return m.httpError(apiErr.StatusCode, apiErr.Response, apiErr.Code, apiErr.Message)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return m.streamError(streamErr.Event.Data)
	}
	var urlErr *url.Error
	var blocked *netguard.BlockedError
	switch {
	case res == nil && errors.As(err, &blocked):
		// The guarded client refused the address (a server an
		// organisation connected, outside its network mode): asking
		// again cannot help.
		return &llm.Error{Kind: llm.ErrBadRequest, Msg: "the server's address is not allowed in this network mode (" + blocked.Error() + ")"}
	case res == nil && errors.As(err, &urlErr):
		return &llm.Error{Kind: llm.ErrNetwork, Msg: m.clean(err.Error())}
	case res == nil:
		// Nothing was sent: the request could not be built.
		return &llm.Error{Kind: llm.ErrBadRequest, Msg: "request: " + m.clean(err.Error())}
	case res.StatusCode >= 400:
		// The SDK could not read the body as an error object.
		return m.httpError(res.StatusCode, res, "", "")
	}
	return &llm.Error{Kind: llm.ErrServer, Status: res.StatusCode, Msg: "broken stream: " + m.clean(err.Error())}
}

// httpError classifies an HTTP error answer: by status, refined by the
// body's error code, with the wait the provider asked for.
func (m *Model) httpError(status int, res *http.Response, code, msg string) *llm.Error {
	if msg == "" && res != nil {
		code, msg = bodyError(res.Body)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &llm.Error{Kind: refine(llm.KindForStatus(status), code, msg), Status: status, Msg: m.message(code, msg)}
	if res != nil {
		e.RetryAfter = retryAfter(res.Header, m.now())
	}
	return e
}

// streamError classifies an error event sent in place of a chunk, after
// the 200 status: the server failed mid-reply.
func (m *Model) streamError(data []byte) *llm.Error {
	code, msg := parseError(data)
	if msg == "" {
		msg = "error event in the stream"
	}
	return &llm.Error{Kind: refine(llm.ErrServer, code, msg), Msg: m.message(code, msg)}
}

// refine improves a status-based kind with the body's code. OpenAI sets
// the codes; compatible servers (vLLM, llama.cpp) often send only a
// message, so the context-length wording counts too.
func refine(kind llm.ErrorKind, code, msg string) llm.ErrorKind {
	switch code {
	case "context_length_exceeded":
		return llm.ErrContextLength
	case "rate_limit_exceeded", "insufficient_quota":
		return llm.ErrRateLimit
	case "invalid_api_key":
		return llm.ErrAuth
	}
	low := strings.ToLower(msg)
	if kind == llm.ErrBadRequest && (strings.Contains(low, "maximum context length") || strings.Contains(low, "exceeds the available context size")) {
		return llm.ErrContextLength
	}
	return kind
}

// retryAfter reads OpenAI's retry-after-ms, else the standard Retry-After.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	return llm.ParseRetryAfter(h.Get("Retry-After"), now)
}

// bodyError reads an error body the SDK could not decode.
func bodyError(body io.Reader) (code, msg string) {
	if body == nil {
		return "", ""
	}
	b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
	return parseError(b)
}

// parseError finds the code and message in an error body: OpenAI's
// {"error": {"message", "code"}}, {"error": "text"}, vLLM's top-level
// {"message", "code"}, or else the body itself as text.
func parseError(b []byte) (code, msg string) {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Code    any             `json:"code"`
	}
	if json.Unmarshal(b, &body) != nil {
		return "", strings.TrimSpace(string(b))
	}
	var inner struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(body.Error, &inner) == nil && inner.Message != "" {
		return codeString(inner.Code), inner.Message
	}
	var text string
	if json.Unmarshal(body.Error, &text) == nil && text != "" {
		return "", text
	}
	return codeString(body.Code), body.Message
}

func codeString(c any) string {
	if s, ok := c.(string); ok {
		return s
	}
	return ""
}

// maxMessage bounds a provider's message in an error.
const maxMessage = 500

// message is the Msg of an error: the provider's words, key removed,
// with the code when there is one.
func (m *Model) message(code, msg string) string {
	msg = m.clean(msg)
	if code != "" {
		msg += " (" + code + ")"
	}
	return msg
}

// clean removes the API key and anything shaped like one from s, and
// bounds its length.
func (m *Model) clean(s string) string {
	s = m.redact.ReplaceAllString(s, "[redacted]")
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// secretPattern matches key, and OpenAI-style keys ("sk-...", which
// OpenAI echoes partly masked in its invalid-key message).
func secretPattern(key string) *regexp.Regexp {
	p := `sk-[A-Za-z0-9_*\-]+`
	if key != "" {
		p = regexp.QuoteMeta(key) + "|" + p
	}
	return regexp.MustCompile(p)
}
