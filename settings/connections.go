package settings

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/netguard"
)

// Connection is an OpenAI-compatible model server an organisation
// connects itself (Ollama, vLLM, LM Studio, llama.cpp's server): its
// agents name it as the provider of their model, "NAME:model".
type Connection struct {
	// Name is the provider name agents use.
	Name string
	// BaseURL is the server's API root: the part "/chat/completions" and
	// "/models" are joined to (http://host:1234/v1), or for Name "ollama"
	// the server itself (http://host:11434).
	BaseURL string
	// KeySet says whether a key is saved for it; its value is write-only,
	// never shown.
	KeySet bool
}

// ConnectionUpdate is one connection as an Update saves it. Connections
// absent from the update are removed, with their keys.
type ConnectionUpdate struct {
	Name, BaseURL string
	// Key sets the connection's key (sent as a bearer token); "" keeps
	// the saved one, which is allowed only while BaseURL stays the one
	// it was saved with: a key goes only to the server it was typed for.
	Key string
	// ClearKey removes the saved key.
	ClearKey bool
}

// ConnectionTest is a connection to try before (or after) saving it.
type ConnectionTest struct {
	Name, BaseURL string
	// Key is sent as a bearer token; "" sends the key saved for Name
	// when BaseURL is the one it was saved with, else none.
	Key string
	// NetworkMode is the mode to try it in (the form's, maybe not saved
	// yet); "" is the organisation's mode in force. It must be one the
	// deployment offers.
	NetworkMode string
}

// ConnectionReport is what a connection test found: the server answered
// with its model list.
type ConnectionReport struct {
	// URL is the address asked.
	URL string
	// Models are the model ids the server reports, sorted, at most
	// providers.MaxListedModels; never nil.
	Models []string
	// Truncated is true when the server reported more than that.
	Truncated bool
	// KeyUsed is KeyTyped, KeySaved or KeyNone.
	KeyUsed string
}

// Which key a connection test sent (ConnectionReport.KeyUsed).
const (
	KeyTyped = "typed"
	KeySaved = "saved"
	KeyNone  = "none"
)

// ConnectionError is a connection test whose server could not be reached
// or did not answer with a model list. Nothing was written; Msg is for the
// admin and never holds a key.
type ConnectionError struct{ Msg string }

// Error returns Msg.
func (e *ConnectionError) Error() string { return e.Msg }

// Bounds on connections.
const (
	// MaxConnections is the most connections an organisation saves.
	MaxConnections = 16
	// connectionSecret prefixes a connection's key among the sealed
	// secrets ("connection:lmstudio").
	connectionSecret = "connection:"
)

// connectionName is a connection's name: a provider name as an agent's
// "provider:model" writes it.
var connectionName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// reservedProviders have their own adapters, keys (the key fields) and
// endpoints; a connection of one of those names could send the
// deployment's key to a server the organisation chose.
var reservedProviders = []string{"openai", "anthropic", "gemini", "openrouter"}

// checkConnectionName refuses a name agents could not use, or one that
// is a reserved provider's.
func checkConnectionName(name string) error {
	switch {
	case !connectionName.MatchString(name):
		return fmt.Errorf("%q is not a provider name (lower-case letters, digits, - and _, starting with a letter, at most 32)", name)
	case slices.Contains(reservedProviders, name):
		return fmt.Errorf("%s has its own key field above; a connection is for another server (ollama, lmstudio, vllm, llamacpp, …)", name)
	}
	return nil
}

// checkConnections checks the connections of an update: at most
// MaxConnections, distinct valid names, base URLs the update's network
// mode may reach, and well-formed keys. It reads no stored state (see
// connectionKeys for the rule on saved keys).
func (s *Service) checkConnections(ctx context.Context, u Update) error {
	if len(u.Connections) > MaxConnections {
		return invalid("connections", fmt.Sprintf("at most %d connections", MaxConnections))
	}
	seen := map[string]bool{}
	for _, c := range u.Connections {
		if err := checkConnectionName(c.Name); err != nil {
			return invalid("connections", err.Error())
		}
		if seen[c.Name] {
			return invalid("connections", c.Name+" is listed twice")
		}
		seen[c.Name] = true
		field := "connections." + c.Name
		if err := s.checkConnectionURL(ctx, c.BaseURL, u.NetworkMode); err != nil {
			return invalid(field, err.Error())
		}
		switch key := c.Key; {
		case len(key) > maxKeyLen:
			return invalid(field, fmt.Sprintf("the key is longer than %d characters", maxKeyLen))
		case strings.ContainsAny(key, "\r\n"):
			return invalid(field, "the key must be one line")
		case strings.TrimSpace(key) != "" && c.ClearKey:
			return invalid(field, "the key is both set and cleared")
		}
	}
	return nil
}

// checkConnectionURL accepts an http(s) base URL without credentials,
// query or fragment that the guarded client may reach in mode: in public
// mode a public address on port 80 or 443; a private or loopback one (a
// server on the organisation's own network) only in self-hosted mode,
// which the deployment must allow. A host name is resolved once here; the
// guarded client checks every address again when it dials.
func (s *Service) checkConnectionURL(ctx context.Context, raw, mode string) error {
	if raw == "" {
		return errors.New("the base URL is empty")
	}
	if err := checkEngineURL(raw); err != nil {
		return err
	}
	if u, _ := url.Parse(raw); u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return errors.New("the base URL must have no query or fragment")
	}
	m := netguard.ParseMode(mode)
	err := netguard.New(netguard.Config{Mode: m, Resolver: s.resolver}).CheckURL(ctx, raw)
	var be *netguard.BlockedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &be) && m == netguard.Public:
		return fmt.Errorf("%s: in public network mode a connection must be a public address on port 80 or 443; a server on your own network needs self-hosted mode", be.Error())
	case be != nil:
		return fmt.Errorf("%s: not reachable in any mode (cloud metadata and similar addresses are refused)", be.Error())
	}
	return err
}

// connectionDocs are the stored form of an update's connections: base
// URL by name; nil for none.
func connectionDocs(cs []ConnectionUpdate) map[string]string {
	if len(cs) == 0 {
		return nil
	}
	out := make(map[string]string, len(cs))
	for _, c := range cs {
		out[c.Name] = c.BaseURL
	}
	return out
}

// connectionKeys applies an update's connection keys to secrets (the
// sealed secrets being saved, changed in place): a removed connection's
// key goes with it, ClearKey removes, a Key is sealed. A saved key the
// update keeps for a base URL other than the one it was saved with is an
// *InvalidError: the key was typed for that server only.
func (s *Service) connectionKeys(orgID string, stored map[string]string, secrets map[string]string, u Update) error {
	keep := map[string]bool{}
	for _, c := range u.Connections {
		keep[connectionSecret+c.Name] = true
	}
	for name := range secrets {
		if strings.HasPrefix(name, connectionSecret) && !keep[name] {
			delete(secrets, name)
		}
	}
	for _, c := range u.Connections {
		name, key := connectionSecret+c.Name, strings.TrimSpace(c.Key)
		switch {
		case c.ClearKey:
			delete(secrets, name)
		case key != "":
			if s.kr == nil {
				return invalid("", "keys cannot be stored: no encryption key is configured (secrets.key_file or secrets.keys_env)")
			}
			sealed, err := s.kr.Seal([]byte(key), SecretAAD(orgID, name))
			if err != nil {
				return fmt.Errorf("seal %s: %w", name, err)
			}
			secrets[name] = sealed
		case secrets[name] != "" && stored[c.Name] != c.BaseURL:
			return invalid("connections."+c.Name, "the base URL changed, so the saved key is not sent to it: type the key again, or clear it")
		}
	}
	return nil
}

// applyConnections puts a document's connections into cfg's providers,
// each replacing the deployment's provider of that name whole (its key
// and key variable too, which must not reach the organisation's server),
// with its opened key (from keys) and marked Guarded.
func applyConnections(cfg *config.Config, conns map[string]string, keys map[string]string) {
	if len(conns) == 0 {
		return
	}
	if cfg.Providers == nil {
		cfg.Providers = map[string]config.Provider{}
	}
	for name, base := range conns {
		cfg.Providers[name] = config.Provider{BaseURL: base, APIKey: keys[connectionSecret+name], Guarded: true}
	}
}

// withoutConnectionKeys is keys without the connections' (which reach
// models only, through the configuration).
func withoutConnectionKeys(keys map[string]string) map[string]string {
	out := maps.Clone(keys)
	maps.DeleteFunc(out, func(name, _ string) bool { return strings.HasPrefix(name, connectionSecret) })
	return out
}

// connectionViews lists a document's connections, by name, saying
// whether each has a key in secrets; never nil.
func connectionViews(conns map[string]string, secrets map[string]string) []Connection {
	out := make([]Connection, 0, len(conns))
	for _, name := range slices.Sorted(maps.Keys(conns)) {
		out = append(out, Connection{Name: name, BaseURL: conns[name], KeySet: secrets[connectionSecret+name] != ""})
	}
	return out
}

// serverConnections are the providers the deployment's configuration
// gives a base URL, by name; never nil. An organisation's connection of
// the same name replaces one.
func (s *Service) serverConnections() []string {
	out := []string{}
	for _, name := range slices.Sorted(maps.Keys(s.base.Providers)) {
		if s.base.Providers[name].BaseURL != "" {
			out = append(out, name)
		}
	}
	return out
}

// TestConnection asks the server of t for its model list through the
// guarded client, in t's network mode (or the organisation's), bounded
// by Config.ConnectionTimeout, and reads at most
// providers.MaxModelListBytes of its answer; it writes nothing. A name,
// URL or mode the settings would refuse to save is an *InvalidError; a
// server that cannot be reached or answers no model list is a
// *ConnectionError. Neither the report nor an error holds the key.
func (s *Service) TestConnection(ctx context.Context, orgID string, t ConnectionTest) (ConnectionReport, error) {
	st, doc, err := s.read(ctx, orgID)
	if err != nil {
		return ConnectionReport{}, err
	}
	mode := t.NetworkMode
	if mode == "" {
		mode = s.effectiveMode(doc.NetworkMode)
	} else if err := s.checkMode(mode); err != nil {
		return ConnectionReport{}, err
	}
	if err := checkConnectionName(t.Name); err != nil {
		return ConnectionReport{}, invalid("name", err.Error())
	}
	if err := s.checkConnectionURL(ctx, t.BaseURL, mode); err != nil {
		return ConnectionReport{}, invalid("base_url", err.Error())
	}
	key, used := strings.TrimSpace(t.Key), KeyTyped
	if key == "" {
		used = KeyNone
		if sealed := st.Secrets[connectionSecret+t.Name]; sealed != "" && doc.Connections[t.Name] == t.BaseURL && s.kr != nil {
			pt, err := s.kr.Open(sealed, SecretAAD(orgID, connectionSecret+t.Name))
			if err != nil {
				return ConnectionReport{}, fmt.Errorf("open the key of %s: %w", t.Name, err)
			}
			key, used = string(pt), KeySaved
		}
	}
	guard := netguard.New(netguard.Config{Mode: netguard.ParseMode(mode), Timeout: s.connTimeout, Resolver: s.resolver,
		MaxBytes: 2 * providers.MaxModelListBytes})
	list, err := providers.ListModels(ctx, guard, t.Name, t.BaseURL, key)
	var le *providers.ListError
	if errors.As(err, &le) {
		return ConnectionReport{}, &ConnectionError{Msg: le.Msg}
	}
	if err != nil {
		return ConnectionReport{}, err
	}
	return ConnectionReport{URL: list.URL, Models: list.Models, Truncated: list.Truncated, KeyUsed: used}, nil
}
