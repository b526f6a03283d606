package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// probeTimeout bounds the Ollama probe: a person is waiting for the one
// line that says how to connect a model.
const probeTimeout = 2 * time.Second

// probeOllama asks the Ollama server for its models and returns want when
// it has a model of that name, else its first. No server, or one with no
// models, is a *ConnectError.
func (s *Set) probeOllama(ctx context.Context, want string) (string, error) {
	base := strings.TrimSuffix(s.Connection(ollama).BaseURL, "/")
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/tags", nil)
	if err != nil {
		return "", &ConnectError{Msg: "no model connected: " + connectHelp}
	}
	resp, err := s.client(ollama, s.cfg.Probe).Do(req)
	if err != nil {
		return "", &ConnectError{Msg: "no model connected: " + connectHelp}
	}
	defer resp.Body.Close()
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&tags) != nil || len(tags.Models) == 0 {
		return "", &ConnectError{Msg: "no model connected: Ollama answered at " + base + " but has no models (ollama pull qwen3:8b); or " + connectHelp}
	}
	for _, m := range tags.Models {
		if m.Name == want {
			return m.Name, nil
		}
	}
	return tags.Models[0].Name, nil
}
