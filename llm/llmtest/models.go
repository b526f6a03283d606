package llmtest

import (
	"encoding/json"
	"net/http"

	"github.com/quiverhq/quiver/llm"
)

// Models is a fake of the model list an OpenAI-compatible server answers
// (OpenAI, vLLM, LM Studio, llama.cpp's server, Ollama under /v1): GET
// /models or /v1/models, answered {"object": "list", "data": [{"id",
// "object": "model", "created", "owned_by"}]} in IDs' order. With Key set,
// a request without "Authorization: Bearer Key" gets OpenAI's 401 error
// body instead. Any other request is 404.
type Models struct {
	IDs []string
	Key string
}

// ServeHTTP implements http.Handler.
func (m Models) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || (r.URL.Path != "/models" && r.URL.Path != "/v1/models") {
		writeOpenAIError(w, Failure{Status: http.StatusNotFound, Kind: llm.ErrBadRequest, Message: "unknown URL " + r.URL.Path})
		return
	}
	if m.Key != "" && r.Header.Get("Authorization") != "Bearer "+m.Key {
		writeOpenAIError(w, Failure{Status: http.StatusUnauthorized, Kind: llm.ErrAuth, Message: "Incorrect API key provided."})
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range m.IDs {
		out.Data = append(out.Data, model{ID: id, Object: "model", Created: 1700000000, OwnedBy: "organization-owner"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
