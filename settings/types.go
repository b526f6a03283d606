package settings

import (
	"errors"
	"time"

	"github.com/quiverhq/quiver/registry"
)

// View is an organisation's settings in force, as admins see them: every
// value the organisation did not choose is the deployment's, and keys say
// only whether they are set, never their value.
type View struct {
	// Version is passed back in Update; 0 means never saved (the
	// deployment's defaults apply).
	Version int64
	// Switches are the organisation's feature switches (each agent's own
	// switches override them); never nil.
	Switches map[string]bool
	// SwitchNames are the switch names the template language knows.
	SwitchNames []string
	// SwitchInfo says what each of SwitchNames does with the built-in
	// tools, in the same order.
	SwitchInfo []registry.Switch
	// NetworkMode is "public" or "self-hosted".
	NetworkMode string
	// NetworkModes are the modes the deployment lets an organisation pick.
	NetworkModes []string
	// Web are the web engines in force; ExcludeProviders is never nil.
	Web Web
	// Keys are, for every key name Quiver knows (in the order the UI lists
	// them), whether it is set and where from.
	Keys []KeyState
	// Connections are the OpenAI-compatible servers the organisation
	// connected, by name; never nil.
	Connections []Connection
	// ServerConnections name the providers the deployment's own
	// configuration gives a base URL (not editable here), sorted; never
	// nil. A connection of the same name replaces one for the
	// organisation.
	ServerConnections []string
	// EmbeddingModel is the embedding model the memory tools use (the
	// deployment's embedding_model, config.Config.EmbeddingRef): "" when
	// none is configured.
	EmbeddingModel string
	// UpdatedAt is the last save's time; zero when never saved.
	UpdatedAt time.Time
}

// Web configures the web tools' engines.
type Web struct {
	// Disabled turns web_search off.
	Disabled bool
	// SearXNGURL is a SearXNG instance's base URL; "" leaves it out.
	SearXNGURL string
	// IAskURL is the IAsk endpoint; "" leaves it out.
	IAskURL string
	// DuckDuckGoDisabled takes DuckDuckGo out of the chain.
	DuckDuckGoDisabled bool
	// ExcludeProviders are model providers ("ollama", "novelai") whose
	// turns get no web tool (web_search, fetch_url, research_web).
	ExcludeProviders []string
}

// KeyState is whether one write-only key is set, and where from.
type KeyState struct {
	Name string
	// Label is what the key is for, for people.
	Label string
	Set   bool
	// Source is SourceSettings, SourceEnvironment, or "" when not set.
	Source string
}

// Where a set key comes from (KeyState.Source).
const (
	// SourceSettings is a key saved in the organisation's settings.
	SourceSettings = "settings"
	// SourceEnvironment is a key the deployment supplies (its environment
	// or config file).
	SourceEnvironment = "environment"
)

// Update replaces an organisation's settings. Keys are write-only: SetKeys
// sets (a value is never shown again), ClearKeys removes; keys in neither
// keep their value.
type Update struct {
	// Version is the View.Version the change was made on.
	Version     int64
	Switches    map[string]bool
	NetworkMode string
	Web         Web
	SetKeys     map[string]string
	ClearKeys   []string
	// Connections replace the organisation's connections: one absent is
	// removed, with its key.
	Connections []ConnectionUpdate
}

// InvalidError is an Update the settings refuse: one field's value (or, with
// Field "", a combination of fields) is not allowed. Nothing was written.
// Its message is meant for the admin who sent the update.
type InvalidError struct {
	// Field is the update's field at fault, as the API names it
	// ("network_mode", "web.iask_url", "set_keys"); "" when the fault is
	// not one field's.
	Field string
	// Msg says what is wrong and, where it helps, what to do.
	Msg string
}

// Error is "Field: Msg", or Msg when Field is "".
func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// invalid returns an *InvalidError.
func invalid(field, msg string) error { return &InvalidError{Field: field, Msg: msg} }

// ErrConflict is an Update made on a version that is no longer the stored
// one: someone saved (or keys were rotated) in between. Nothing was
// written; its message is meant for the admin.
var ErrConflict = errors.New("the settings were changed by someone else since you opened them; reload and try again")
