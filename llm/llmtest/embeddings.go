package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm"
)

// EmbedSeen is an embeddings request as a fake received it.
type EmbedSeen struct {
	Header http.Header
	// Model is the model named in the request ("text-embedding-3-small";
	// Gemini's without its "models/" prefix).
	Model string
	// Texts are the inputs, in order.
	Texts []string
	// Task is Gemini's taskType ("RETRIEVAL_QUERY"); "" for OpenAI.
	Task string
	// Dims is the dimension asked for, 0 when none was.
	Dims int
}

// EmbedReply is what an embeddings fake answers: one vector per text, or
// a failure.
type EmbedReply struct {
	Vectors [][]float32
	Fail    *Failure
}

// OpenAIEmbeddings fakes POST /embeddings (with or without /v1) of OpenAI
// and the servers that copy it: a JSON body {"input": [strings] or a
// string, "model", "encoding_format", "dimensions"} answered with
// {"object": "list", "data": [{"object": "embedding", "index", "embedding"}],
// "model", "usage"}; failures as OpenAI's error body. A request the real
// API refuses (no model, no input, an encoding other than float) fails
// the test. Written from OpenAI's API reference, not from the SDK.
func OpenAIEmbeddings(t *testing.T, respond func(EmbedSeen) EmbedReply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || (r.URL.Path != "/embeddings" && r.URL.Path != "/v1/embeddings") {
			t.Errorf("openai embeddings fake: unexpected %s %s", r.Method, r.URL.Path)
			writeOpenAIError(w, Failure{Status: http.StatusNotFound, Kind: llm.ErrBadRequest, Message: "unknown URL " + r.URL.Path})
			return
		}
		var wire struct {
			Input          json.RawMessage `json:"input"`
			Model          string          `json:"model"`
			EncodingFormat string          `json:"encoding_format"`
			Dimensions     int             `json:"dimensions"`
		}
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(body, &wire)
		}
		var texts []string
		if err == nil {
			if err = json.Unmarshal(wire.Input, &texts); err != nil {
				var one string
				if err = json.Unmarshal(wire.Input, &one); err == nil {
					texts = []string{one}
				}
			}
		}
		if err != nil || wire.Model == "" || len(texts) == 0 || (wire.EncodingFormat != "" && wire.EncodingFormat != "float") {
			t.Errorf("openai embeddings fake: request the API refuses (%v): %s", err, body)
			writeOpenAIError(w, Failure{Status: http.StatusBadRequest, Kind: llm.ErrBadRequest, Message: "invalid request"})
			return
		}
		reply := respond(EmbedSeen{Header: r.Header.Clone(), Model: wire.Model, Texts: texts, Dims: wire.Dimensions})
		if reply.Fail != nil {
			writeOpenAIError(w, *reply.Fail)
			return
		}
		type datum struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]datum, len(reply.Vectors))
		tokens := 0
		for i, v := range reply.Vectors {
			data[i] = datum{Object: "embedding", Index: i, Embedding: v}
		}
		for _, s := range texts {
			tokens += len(strings.Fields(s))
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"object": "list", "data": data, "model": wire.Model,
			"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
		})
	})
}

// GeminiEmbeddings fakes Gemini's POST /{version}/models/{model}:batchEmbedContents:
// a body {"requests": [{"model": "models/M", "content": {"parts": [{"text"}]},
// "taskType", "outputDimensionality"}]} answered with {"embeddings":
// [{"values"}]}; failures as Google's error body. Written from Gemini's
// API reference, not from the SDK.
func GeminiEmbeddings(t *testing.T, respond func(EmbedSeen) EmbedReply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model, ok := strings.CutSuffix(r.URL.Path, ":batchEmbedContents")
		if i := strings.Index(model, "/models/"); ok && i >= 0 {
			model = model[i+len("/models/"):]
		} else {
			ok = false
		}
		if r.Method != http.MethodPost || !ok {
			t.Errorf("gemini embeddings fake: unexpected %s %s", r.Method, r.URL.Path)
			geminiError(w, &Failure{Status: http.StatusNotFound, Kind: llm.ErrBadRequest, Message: "unknown URL " + r.URL.Path})
			return
		}
		var wire struct {
			Requests []struct {
				Model   string `json:"model"`
				Content struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"content"`
				TaskType             string `json:"taskType"`
				OutputDimensionality int    `json:"outputDimensionality"`
			} `json:"requests"`
		}
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(body, &wire)
		}
		seen := EmbedSeen{Header: r.Header.Clone(), Model: model}
		for i, q := range wire.Requests {
			if q.Model != "models/"+model || len(q.Content.Parts) != 1 {
				err = errBadGeminiEmbed
			}
			if i == 0 {
				seen.Task, seen.Dims = q.TaskType, q.OutputDimensionality
			}
			if len(q.Content.Parts) > 0 {
				seen.Texts = append(seen.Texts, q.Content.Parts[0].Text)
			}
		}
		if err != nil || len(wire.Requests) == 0 {
			t.Errorf("gemini embeddings fake: request the API refuses (%v): %s", err, body)
			geminiError(w, &Failure{Status: http.StatusBadRequest, Kind: llm.ErrBadRequest, Message: "invalid request"})
			return
		}
		reply := respond(seen)
		if reply.Fail != nil {
			geminiError(w, reply.Fail)
			return
		}
		type values struct {
			Values []float32 `json:"values"`
		}
		out := make([]values, len(reply.Vectors))
		for i, v := range reply.Vectors {
			out[i] = values{Values: v}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"embeddings": out})
	})
}

var errBadGeminiEmbed = &llm.Error{Kind: llm.ErrBadRequest, Msg: "each request needs the model models/M and one text part"}
