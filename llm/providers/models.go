package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds on what ListModels reads from a server.
const (
	// MaxModelListBytes caps the body of a model list; a longer one is an
	// error, not read further.
	MaxModelListBytes = 1 << 20
	// MaxListedModels is the most model ids ListModels returns; a server
	// reporting more is cut there (ModelList.Truncated).
	MaxListedModels = 500
	// maxModelID is the longest model id kept; longer ones are left out.
	maxModelID = 256
)

// Doer sends one HTTP request; *http.Client and the guarded client of
// package netguard are both one.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// ModelList is the models an OpenAI-compatible server reports.
type ModelList struct {
	// URL is the address asked (the base URL with /models, or /v1/models
	// for Ollama); it holds no key.
	URL string
	// Models are the model ids, sorted, at most MaxListedModels, never
	// nil.
	Models []string
	// Truncated is true when the server reported more than
	// MaxListedModels (valid, distinct ids).
	Truncated bool
}

// ListError is a server that could not be asked for its models or did not
// answer with a model list: Msg says which, for the admin testing the
// connection, and never holds the key.
type ListError struct{ Msg string }

// Error returns Msg.
func (e *ListError) Error() string { return e.Msg }

// ModelsURL is where provider's OpenAI-compatible server at baseURL lists
// its models: GET {baseURL}/models, or for Ollama, whose base URL is the
// server's root, GET {baseURL}/v1/models.
func ModelsURL(provider, baseURL string) string {
	base := strings.TrimSuffix(baseURL, "/")
	if provider == ollama {
		return base + "/v1/models"
	}
	return base + "/models"
}

// ListModels asks the OpenAI-compatible server of provider at baseURL for
// its models (see ModelsURL), sending key as a bearer token when not "".
// It reads at most MaxModelListBytes of the answer and returns at most
// MaxListedModels ids; ctx and do bound the time (do is where the caller
// applies its address policy). A failure to reach the server, a status
// other than 200 and an answer that is not a model list are *ListError.
func ListModels(ctx context.Context, do Doer, provider, baseURL, key string) (ModelList, error) {
	out := ModelList{URL: ModelsURL(provider, baseURL), Models: []string{}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, out.URL, nil)
	if err != nil {
		return out, &ListError{Msg: "not a URL Quiver can ask: " + err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := do.Do(req)
	if err != nil {
		return out, &ListError{Msg: "the server did not answer: " + reachError(ctx, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return out, &ListError{Msg: statusHint(resp.StatusCode, out.URL)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxModelListBytes+1))
	switch {
	case err != nil:
		return out, &ListError{Msg: "the model list could not be read: " + reachError(ctx, err)}
	case len(body) > MaxModelListBytes:
		return out, &ListError{Msg: fmt.Sprintf("the model list is longer than %d KiB, more than Quiver reads", MaxModelListBytes>>10)}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		return out, &ListError{Msg: "the answer is not an OpenAI-compatible model list (" + out.URL + " should answer {\"data\": [{\"id\": …}]})"}
	}
	out.Models, out.Truncated = modelIDs(list.Data)
	return out, nil
}

// modelIDs are the valid, distinct ids of a list, sorted and cut at
// MaxListedModels.
func modelIDs(data []struct {
	ID string `json:"id"`
}) ([]string, bool) {
	ids := make([]string, 0, min(len(data), MaxListedModels))
	for _, d := range data {
		id := strings.TrimSpace(d.ID)
		if id == "" || len(id) > maxModelID || !utf8.ValidString(id) || strings.ContainsFunc(id, isControl) {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > MaxListedModels {
		return ids[:MaxListedModels], true
	}
	return ids, false
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// reachError says why a request got no answer: the caller's deadline, or
// the error (which names the host, never the key).
func reachError(ctx context.Context, err error) string {
	var te interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &te) && te.Timeout()) {
		return "no answer in time"
	}
	return err.Error()
}

// statusHint says what a status other than 200 likely means.
func statusHint(status int, url string) string {
	msg := fmt.Sprintf("the server answered %d %s", status, http.StatusText(status))
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return msg + ": check the key"
	case http.StatusNotFound:
		return msg + " for " + url + ": check the base URL (an OpenAI-compatible server's ends in /v1, like http://host:1234/v1; Ollama's is the server itself, like http://host:11434)"
	}
	return msg
}
