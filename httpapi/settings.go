package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
)

func (s *server) settingsRoutes() {
	tags := []string{"settings"}
	register(s, huma.Operation{
		OperationID: "get-settings", Method: http.MethodGet, Path: "/api/settings", Tags: tags,
		Summary: "The organisation's settings",
		Description: "Feature switches, network mode, web engines, and for every key Quiver knows whether it is set " +
			"and where from; never a key's value.",
	}, adminOnly, s.getSettings)
	register(s, huma.Operation{
		OperationID: "put-settings", Method: http.MethodPut, Path: "/api/settings", Tags: tags,
		Summary: "Replace the organisation's settings",
		Description: "One write. version must be the version read: a stale one is 409 conflict and writes nothing (read " +
			"again and reapply). Keys are write-only: set_keys sets, clear_keys removes, others keep their value. " +
			"A bad field is 400 and writes nothing. Returns the settings now in force.",
		Errors: []int{http.StatusConflict},
	}, adminOnly, s.putSettings)
	register(s, huma.Operation{
		OperationID: "test-connection", Method: http.MethodPost, Path: "/api/settings/connections/test", Tags: tags,
		Summary: "Ask an OpenAI-compatible server for its models",
		Description: "Tries a connection, saved or not: GET {base_url}/models ({base_url}/v1/models for ollama) through the " +
			"guarded client in network_mode (default: the organisation's), answering the models the server reports " +
			"(sorted, at most 500). key is sent as a bearer token; without one, the key saved for name is sent when " +
			"base_url is the one it was saved with. A name, URL or mode a save would refuse is 400 invalid_request; a " +
			"server that does not answer in 10 s, answers another status or no model list is 400 connection_failed. " +
			"Writes nothing; the answer never holds a key.",
	}, adminOnly, s.testConnection)
}

type testConnectionInput struct{ Body ConnectionTest }

type testConnectionOutput struct{ Body ConnectionReport }

func (s *server) testConnection(ctx context.Context, in *testConnectionInput) (*testConnectionOutput, error) {
	a := authFrom(ctx)
	b := in.Body
	r, err := s.eng.TestConnection(ctx, a.Caller, settings.ConnectionTest{Name: b.Name, BaseURL: b.BaseURL, Key: b.Key, NetworkMode: b.NetworkMode})
	if err != nil {
		return nil, settingsError(err)
	}
	return &testConnectionOutput{Body: ConnectionReport(r)}, nil
}

type settingsOutput struct{ Body Settings }

type putSettingsInput struct{ Body SettingsUpdate }

func (s *server) getSettings(ctx context.Context, _ *struct{}) (*settingsOutput, error) {
	a := authFrom(ctx)
	v, err := s.eng.Settings(ctx, a.Caller)
	if err != nil {
		return nil, settingsError(err)
	}
	return &settingsOutput{Body: settingsWire(v)}, nil
}

func (s *server) putSettings(ctx context.Context, in *putSettingsInput) (*settingsOutput, error) {
	a := authFrom(ctx)
	v, err := s.eng.UpdateSettings(ctx, a.Caller, in.Body.domain())
	if err != nil {
		return nil, settingsError(err)
	}
	return &settingsOutput{Body: settingsWire(v)}, nil
}

// settingsError maps the settings' errors to the wire: an
// *settings.InvalidError is 400 invalid_request, a
// *settings.ConnectionError 400 connection_failed and
// settings.ErrConflict 409 conflict, each with its message; anything else
// is returned as is (an internal error, logged and answered 500).
func settingsError(err error) error {
	var inv *settings.InvalidError
	if errors.As(err, &inv) {
		return badRequest(inv.Error())
	}
	if errors.Is(err, settings.ErrConflict) {
		return apiErr(http.StatusConflict, "conflict", settings.ErrConflict.Error())
	}
	var ce *settings.ConnectionError
	if errors.As(err, &ce) {
		return apiErr(http.StatusBadRequest, "connection_failed", ce.Msg)
	}
	return err
}

// settingsWire is v as the API shows it: nil lists and maps are [] and {},
// never null.
func settingsWire(v settings.View) Settings {
	st := Settings{
		Version: v.Version, Switches: v.Switches, SwitchNames: v.SwitchNames, SwitchInfo: switchInfoWire(v.SwitchInfo),
		NetworkMode: v.NetworkMode, NetworkModes: v.NetworkModes, Web: WebSettings(v.Web),
		Keys: make([]KeyState, 0, len(v.Keys)), UpdatedAt: v.UpdatedAt,
		Connections: make([]ConnectionState, 0, len(v.Connections)), ServerConnections: v.ServerConnections,
		EmbeddingModel: v.EmbeddingModel,
	}
	for _, k := range v.Keys {
		st.Keys = append(st.Keys, KeyState(k))
	}
	for _, c := range v.Connections {
		st.Connections = append(st.Connections, ConnectionState(c))
	}
	if st.ServerConnections == nil {
		st.ServerConnections = []string{}
	}
	if st.Switches == nil {
		st.Switches = map[string]bool{}
	}
	if st.SwitchNames == nil {
		st.SwitchNames = []string{}
	}
	if st.NetworkModes == nil {
		st.NetworkModes = []string{}
	}
	if st.Web.ExcludeProviders == nil {
		st.Web.ExcludeProviders = []string{}
	}
	return st
}

// switchInfoWire is the switches' descriptions as the API shows them;
// never nil, and no Tools is [].
func switchInfoWire(in []registry.Switch) []SwitchInfo {
	out := make([]SwitchInfo, 0, len(in))
	for _, s := range in {
		w := SwitchInfo(s)
		if w.Tools == nil {
			w.Tools = []string{}
		}
		out = append(out, w)
	}
	return out
}

// domain is the update as the settings take it.
func (u SettingsUpdate) domain() settings.Update {
	out := settings.Update{
		Version: u.Version, Switches: u.Switches, NetworkMode: u.NetworkMode, Web: settings.Web(u.Web),
		SetKeys: u.SetKeys, ClearKeys: u.ClearKeys,
	}
	for _, c := range u.Connections {
		out.Connections = append(out.Connections, settings.ConnectionUpdate(c))
	}
	return out
}

// Settings are an organisation's settings as the API shows them.
type Settings struct {
	// Version is passed back in SettingsUpdate; 0 means never saved (the
	// deployment's defaults apply).
	Version int64 `json:"version"`
	// Switches are the organisation's feature switches: each agent's own
	// switches override them.
	Switches map[string]bool `json:"switches"`
	// SwitchNames are the switch names the template language knows.
	SwitchNames []string `json:"switch_names"`
	// SwitchInfo says what each of SwitchNames does, in the same order.
	SwitchInfo []SwitchInfo `json:"switch_info"`
	// NetworkMode is "public" or "self-hosted".
	NetworkMode string `json:"network_mode" enum:"public,self-hosted"`
	// NetworkModes are the modes the deployment allows an organisation.
	NetworkModes []string    `json:"network_modes"`
	Web          WebSettings `json:"web"`
	// Keys tells, for every key name Quiver knows, whether it is set.
	Keys []KeyState `json:"keys"`
	// Connections are the organisation's own OpenAI-compatible servers.
	Connections []ConnectionState `json:"connections"`
	// ServerConnections name the providers the server's configuration
	// gives a base URL (not changed here); a connection of the same name
	// replaces one for the organisation.
	ServerConnections []string `json:"server_connections"`
	// EmbeddingModel is the embedding model the memory tools use, set in
	// the server's configuration (embedding_model); "" when none.
	EmbeddingModel string    `json:"embedding_model"`
	UpdatedAt      time.Time `json:"updated_at,omitzero"`
}

// ConnectionState is one of the organisation's OpenAI-compatible servers
// (Ollama, vLLM, LM Studio, llama.cpp's server), as agents name it in
// "name:model"; its key is write-only.
type ConnectionState struct {
	Name string `json:"name"`
	// BaseURL is the API root (http://host:1234/v1), or for ollama the
	// server itself (http://host:11434).
	BaseURL string `json:"base_url"`
	// KeySet says whether a key is saved; never its value.
	KeySet bool `json:"key_set"`
}

// ConnectionUpdate is one connection as a save sends it.
type ConnectionUpdate struct {
	Name    string `json:"name" maxLength:"32"`
	BaseURL string `json:"base_url" maxLength:"500"`
	// Key sets the key (write-only); "" keeps the saved one, allowed only
	// while base_url is the one it was saved with.
	Key string `json:"key,omitempty" maxLength:"500" required:"false"`
	// ClearKey removes the saved key.
	ClearKey bool `json:"clear_key,omitempty" required:"false"`
}

// ConnectionTest is a connection to try, saved or not.
type ConnectionTest struct {
	Name    string `json:"name" maxLength:"32"`
	BaseURL string `json:"base_url" maxLength:"500"`
	// Key is sent as a bearer token; "" sends the key saved for name when
	// base_url is the one it was saved with, else none.
	Key string `json:"key,omitempty" maxLength:"500" required:"false"`
	// NetworkMode is the mode to try it in (the form's); "" is the
	// organisation's.
	NetworkMode string `json:"network_mode,omitempty" enum:"public,self-hosted," required:"false"`
}

// ConnectionReport is the model list a connection test got.
type ConnectionReport struct {
	// URL is the address asked.
	URL string `json:"url"`
	// Models are the server's model ids, sorted, at most 500.
	Models []string `json:"models"`
	// Truncated is true when the server reported more.
	Truncated bool `json:"truncated"`
	// KeyUsed says which key was sent.
	KeyUsed string `json:"key_used" enum:"typed,saved,none"`
}

// SwitchInfo is what one feature switch does.
type SwitchInfo struct {
	Name string `json:"name"`
	// Family is the tool family the switch gates; "" when it gates none.
	Family string `json:"family,omitempty" required:"false"`
	// Tools are the built-in tools the switch takes out when set off.
	Tools []string `json:"tools"`
	// NoTool is true for a switch whose tools do not exist yet: setting
	// it changes nothing.
	NoTool bool `json:"no_tool"`
	// Effect says what the switch changes, for people.
	Effect string `json:"effect"`
}

// WebSettings configure the web tools' engines.
type WebSettings struct {
	// Disabled turns web_search off.
	Disabled bool `json:"disabled" required:"false"`
	// SearXNGURL is a SearXNG instance's base URL; "" leaves it out.
	SearXNGURL string `json:"searxng_url" maxLength:"500" required:"false"`
	// IAskURL is the IAsk endpoint; "" leaves it out.
	IAskURL string `json:"iask_url" maxLength:"500" required:"false"`
	// DuckDuckGoDisabled takes DuckDuckGo out of the chain.
	DuckDuckGoDisabled bool `json:"duckduckgo_disabled" required:"false"`
	// ExcludeProviders are model providers ("ollama", "novelai") whose
	// turns get no web tool (web_search, fetch_url, research_web).
	ExcludeProviders []string `json:"exclude_providers" maxItems:"8" required:"false"`
}

// KeyState is whether one write-only key is set, and where from.
type KeyState struct {
	Name string `json:"name"`
	// Label is what the key is for, for people.
	Label string `json:"label"`
	Set   bool   `json:"set"`
	// Source is "settings" (saved here), "environment" (the deployment's
	// environment or config file) or "" when not set.
	Source string `json:"source" enum:"settings,environment,"`
}

// SettingsUpdate replaces an organisation's settings. Keys are write-only:
// SetKeys sets (a value is never shown again), ClearKeys removes; keys in
// neither keep their value.
type SettingsUpdate struct {
	// Version is the Settings.Version the change was made on.
	Version     int64             `json:"version" minimum:"0"`
	Switches    map[string]bool   `json:"switches" required:"false"`
	NetworkMode string            `json:"network_mode" enum:"public,self-hosted"`
	Web         WebSettings       `json:"web" required:"false"`
	SetKeys     map[string]string `json:"set_keys,omitempty"`
	ClearKeys   []string          `json:"clear_keys,omitempty" maxItems:"16"`
	// Connections replace the organisation's: one left out is removed,
	// with its key.
	Connections []ConnectionUpdate `json:"connections,omitempty" maxItems:"16"`
}
