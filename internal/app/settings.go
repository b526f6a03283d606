package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tmpl"
)

// settingsDoc is an organisation's settings document as stored. It holds
// only what differs from the deployment's configuration at save time: an
// absent (nil, "") field follows the deployment, so an operator's later
// change reaches every organisation that did not choose otherwise.
type settingsDoc struct {
	Switches map[string]bool `json:"switches"`
	// NetworkMode is "" to follow the deployment.
	NetworkMode string `json:"network_mode,omitempty"`
	Web         webDoc `json:"web"`
}

// webDoc is the web engines' part of settingsDoc; nil follows the
// deployment.
type webDoc struct {
	Disabled           *bool     `json:"disabled,omitempty"`
	SearXNGURL         *string   `json:"searxng_url,omitempty"`
	IAskURL            *string   `json:"iask_url,omitempty"`
	DuckDuckGoDisabled *bool     `json:"duckduckgo_disabled,omitempty"`
	ExcludeProviders   *[]string `json:"exclude_providers,omitempty"`
}

// override returns nil when v equals the deployment's value, else &v.
func override[T comparable](v, base T) *T {
	if v == base {
		return nil
	}
	return &v
}

// or returns *p, or base when p is nil.
func or[T any](p *T, base T) T {
	if p == nil {
		return base
	}
	return *p
}

// keySpec is one write-only key an organisation may store.
type keySpec struct {
	name, label string
	// provider is the model provider the key is for; "" for engines.
	provider string
}

// orgKeys are the keys Settings knows, in the order the UI lists them.
var orgKeys = []keySpec{
	{"openai_api_key", "OpenAI API key", "openai"},
	{"anthropic_api_key", "Anthropic API key", "anthropic"},
	{"gemini_api_key", "Gemini API key", "gemini"},
	{"openrouter_api_key", "OpenRouter API key", "openrouter"},
	{"brave_api_key", "Brave Search API key", ""},
	{"iask_api_key", "IAsk API key", ""},
}

// Limits on settings values.
const (
	maxKeyLen = 500
	maxURLLen = 500
)

// providerName is what exclude_providers may hold: a model provider's
// name, as in an agent's "provider:model".
var providerName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// orgView is the configuration in force for one organisation at one
// settings version, with the catalog built from it.
type orgView struct {
	version int64
	// cfg is the deployment configuration with the organisation's
	// settings applied (network mode, web engines, provider keys).
	cfg config.Config
	// switches are the organisation's feature switches (agents' own
	// switches override them).
	switches map[string]bool
	// keys are the organisation's opened keys by name.
	keys    map[string]string
	catalog *registry.Catalog
	// doc is the stored document the view was built from, and updatedAt
	// its save time (a rotation changes neither; every save stamps it).
	doc       []byte
	updatedAt time.Time
}

// orgSettings reads organisations' settings and keeps, per organisation,
// the view of the latest version (catalogs are rebuilt only when the
// settings change). It is safe for concurrent use.
type orgSettings struct {
	st     store.Store
	kr     *secret.Keyring
	base   config.Config
	getenv func(string) string
	now    func() time.Time
	logger *slog.Logger
	// build makes the built-in catalog for a configuration and the keys.
	build func(cfg config.Config, keys map[string]string) *registry.Catalog

	mu    sync.Mutex
	views map[string]*orgView
	// baseView serves organisations that never saved settings.
	baseView *orgView
}

func newOrgSettings(st store.Store, kr *secret.Keyring, base config.Config, env Env, build func(config.Config, map[string]string) *registry.Catalog) *orgSettings {
	o := &orgSettings{st: st, kr: kr, base: base, getenv: env.Getenv, now: env.Now, logger: env.Logger, build: build, views: map[string]*orgView{}}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.getenv == nil {
		o.getenv = func(string) string { return "" }
	}
	if o.now == nil {
		o.now = clock.Now
	}
	o.baseView = &orgView{cfg: base, switches: map[string]bool{}, keys: map[string]string{}, catalog: build(base, nil)}
	return o
}

// SecretAAD binds a sealed settings key to its organisation and name.
func SecretAAD(orgID, name string) []byte { return []byte("settings:" + orgID + ":" + name) }

// view returns the organisation's view at its stored version.
func (o *orgSettings) view(ctx context.Context, orgID string) (*orgView, error) {
	s, err := o.st.GetOrgSettings(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("read settings of %s: %w", orgID, err)
	}
	if s.Version == 0 {
		return o.baseView, nil
	}
	o.mu.Lock()
	v, ok := o.views[orgID]
	o.mu.Unlock()
	if ok && v.version == s.Version {
		return v, nil
	}
	nv, err := o.newView(s)
	if err != nil {
		if !ok || !o.sameSettings(v, s) {
			return nil, err
		}
		// Only the sealing changed (quiver secrets rotate ran under a key
		// this process was not started with): the keys it opened before
		// are still the keys. Restart with the new keyring to read them.
		o.logger.Warn("settings keys re-encrypted under a key this server does not have; using the keys read before (restart with the new keyring)", "org", orgID, "err", err)
		cp := *v
		cp.version = s.Version
		nv = &cp
	}
	v = nv
	o.mu.Lock()
	if cur, ok := o.views[orgID]; !ok || cur.version < v.version {
		o.views[orgID] = v
	}
	o.mu.Unlock()
	return v, nil
}

// newView builds the view of stored settings.
func (o *orgSettings) newView(s store.OrgSettings) (*orgView, error) {
	var doc settingsDoc
	if err := json.Unmarshal(s.Doc, &doc); err != nil {
		return nil, fmt.Errorf("settings of %s: %w", s.OrgID, err)
	}
	keys := make(map[string]string, len(s.Secrets))
	for name, sealed := range s.Secrets {
		if o.kr == nil {
			return nil, fmt.Errorf("settings of %s: keys are stored but no encryption key is configured", s.OrgID)
		}
		pt, err := o.kr.Open(sealed, SecretAAD(s.OrgID, name))
		if err != nil {
			return nil, fmt.Errorf("settings of %s: key %s: %w", s.OrgID, name, err)
		}
		keys[name] = string(pt)
	}
	cfg := o.apply(doc, keys)
	return &orgView{
		version: s.Version, cfg: cfg, switches: doc.Switches, keys: keys,
		catalog: o.build(cfg, keys), doc: slices.Clone(s.Doc), updatedAt: s.UpdatedAt,
	}, nil
}

// sameSettings reports whether stored settings say what the view was
// built from: no save since (a rotation keeps UpdatedAt), the same
// document and the same key names (their sealing may differ).
func (o *orgSettings) sameSettings(v *orgView, s store.OrgSettings) bool {
	if !v.updatedAt.Equal(s.UpdatedAt) || !bytes.Equal(v.doc, s.Doc) || len(v.keys) != len(s.Secrets) {
		return false
	}
	for name := range s.Secrets {
		if _, ok := v.keys[name]; !ok {
			return false
		}
	}
	return true
}

// apply returns the deployment configuration with a document and keys
// applied. The deployment's configuration is a ceiling: the network mode
// is never wider than its mode, web search and DuckDuckGo stay off where
// it turned them off, and its IAsk key goes only to its own IAsk URL.
func (o *orgSettings) apply(doc settingsDoc, keys map[string]string) config.Config {
	cfg := o.base
	if slices.Contains(o.modes(), doc.NetworkMode) {
		cfg.Network.Mode = doc.NetworkMode
	}
	web := o.effectiveWeb(doc.Web)
	w := &cfg.Web
	w.Disabled, w.SearXNGURL, w.IAskURL = web.Disabled, web.SearXNGURL, web.IAskURL
	w.DuckDuckGoDisabled, w.ExcludeProviders = web.DuckDuckGoDisabled, web.ExcludeProviders
	if w.IAskURL != o.base.Web.IAskURL {
		w.IAskKeyEnv = "" // the deployment's key is for its own endpoint only
	}
	cfg.Providers = maps.Clone(o.base.Providers)
	for _, k := range orgKeys {
		if v := keys[k.name]; v != "" && k.provider != "" {
			if cfg.Providers == nil {
				cfg.Providers = map[string]config.Provider{}
			}
			p := cfg.Providers[k.provider]
			p.APIKey = v
			cfg.Providers[k.provider] = p
		}
	}
	return cfg
}

// effectiveWeb is the deployment's web settings with the document's
// overrides, under the deployment's ceiling.
func (o *orgSettings) effectiveWeb(d webDoc) httpapi.WebSettings {
	b := o.base.Web
	return httpapi.WebSettings{
		Disabled:           b.Disabled || or(d.Disabled, false),
		SearXNGURL:         or(d.SearXNGURL, b.SearXNGURL),
		IAskURL:            or(d.IAskURL, b.IAskURL),
		DuckDuckGoDisabled: b.DuckDuckGoDisabled || or(d.DuckDuckGoDisabled, false),
		ExcludeProviders:   slices.Clone(or(d.ExcludeProviders, b.ExcludeProviders)),
	}
}

// modes are the network modes the deployment lets an organisation pick:
// a public deployment allows only public; a self-hosted one both.
func (o *orgSettings) modes() []string {
	if o.base.Network.Mode == "self-hosted" {
		return []string{"public", "self-hosted"}
	}
	return []string{"public"}
}

// mode is the netguard mode in force for an organisation (for MCP).
func (o *orgSettings) mode(ctx context.Context, orgID string) (netguard.Mode, error) {
	v, err := o.view(ctx, orgID)
	if err != nil {
		return netguard.Public, err
	}
	if v.cfg.Network.Mode == "self-hosted" {
		return netguard.SelfHosted, nil
	}
	return netguard.Public, nil
}

// show renders the settings in force as the API shows them.
func (o *orgSettings) show(ctx context.Context, orgID string) (httpapi.Settings, error) {
	s, err := o.st.GetOrgSettings(ctx, orgID)
	if err != nil {
		return httpapi.Settings{}, fmt.Errorf("read settings of %s: %w", orgID, err)
	}
	var doc settingsDoc
	if s.Version > 0 {
		if err := json.Unmarshal(s.Doc, &doc); err != nil {
			return httpapi.Settings{}, fmt.Errorf("settings of %s: %w", orgID, err)
		}
	}
	if doc.Switches == nil {
		doc.Switches = map[string]bool{}
	}
	web := o.effectiveWeb(doc.Web)
	if web.ExcludeProviders == nil {
		web.ExcludeProviders = []string{}
	}
	out := httpapi.Settings{
		Version: s.Version, Switches: doc.Switches, SwitchNames: tmpl.KnownCapabilities(),
		SwitchInfo:  switchInfo(o.baseView.catalog),
		NetworkMode: o.effectiveMode(doc.NetworkMode), NetworkModes: o.modes(), Web: web, UpdatedAt: s.UpdatedAt,
	}
	for _, k := range orgKeys {
		ks := httpapi.KeyState{Name: k.name, Label: k.label}
		switch {
		case s.Secrets[k.name] != "":
			ks.Set, ks.Source = true, "settings"
		case o.fromEnvironment(k) && (k.name != "iask_api_key" || web.IAskURL == o.base.Web.IAskURL):
			ks.Set, ks.Source = true, "environment"
		}
		out.Keys = append(out.Keys, ks)
	}
	return out, nil
}

// switchInfo says what every known switch does with the built-in tools
// (the same in every organisation: settings change engines, not which
// tools exist).
func switchInfo(c *registry.Catalog) []httpapi.SwitchInfo {
	var out []httpapi.SwitchInfo
	for _, s := range c.Switches() {
		out = append(out, httpapi.SwitchInfo{Name: s.Name, Family: s.Family, Tools: s.Tools, NoTool: s.NoTool, Effect: s.Effect})
	}
	return out
}

// baseMode is the deployment's network mode.
func (o *orgSettings) baseMode() string {
	if o.base.Network.Mode == "self-hosted" {
		return "self-hosted"
	}
	return "public"
}

// effectiveMode is the mode a document's choice amounts to.
func (o *orgSettings) effectiveMode(chosen string) string {
	if slices.Contains(o.modes(), chosen) {
		return chosen
	}
	return o.baseMode()
}

// fromEnvironment reports whether the deployment supplies the key.
func (o *orgSettings) fromEnvironment(k keySpec) bool {
	if k.provider != "" {
		return models{getenv: o.getenv}.set(o.base).Connection(k.provider).Key != ""
	}
	switch k.name {
	case "brave_api_key":
		env := o.base.Web.BraveKeyEnv
		if env == "" {
			env = "BRAVE_API_KEY"
		}
		return o.getenv(env) != ""
	case "iask_api_key":
		return o.base.Web.IAskKeyEnv != "" && o.getenv(o.base.Web.IAskKeyEnv) != ""
	}
	return false
}

// update validates u and stores it in one write.
func (o *orgSettings) update(ctx context.Context, orgID string, u httpapi.SettingsUpdate) (httpapi.Settings, error) {
	doc, err := o.validate(u)
	if err != nil {
		return httpapi.Settings{}, &httpapi.BadRequest{Msg: err.Error()}
	}
	cur, err := o.st.GetOrgSettings(ctx, orgID)
	if err != nil {
		return httpapi.Settings{}, fmt.Errorf("read settings of %s: %w", orgID, err)
	}
	if cur.Version != u.Version {
		return httpapi.Settings{}, &httpapi.Conflict{Msg: "the settings were changed by someone else since you opened them; reload and try again"}
	}
	secrets := maps.Clone(cur.Secrets)
	if secrets == nil {
		secrets = map[string]string{}
	}
	for _, name := range u.ClearKeys {
		delete(secrets, name)
	}
	for name, value := range u.SetKeys {
		if o.kr == nil {
			return httpapi.Settings{}, &httpapi.BadRequest{Msg: "keys cannot be stored: no encryption key is configured (secrets.key_file or secrets.keys_env)"}
		}
		sealed, err := o.kr.Seal([]byte(strings.TrimSpace(value)), SecretAAD(orgID, name))
		if err != nil {
			return httpapi.Settings{}, fmt.Errorf("seal %s: %w", name, err)
		}
		secrets[name] = sealed
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return httpapi.Settings{}, fmt.Errorf("encode settings: %w", err)
	}
	_, err = o.st.PutOrgSettings(ctx, store.OrgSettings{OrgID: orgID, Doc: raw, Secrets: secrets, Version: u.Version, UpdatedAt: o.now()})
	if errors.Is(err, store.ErrConflict) {
		return httpapi.Settings{}, &httpapi.Conflict{Msg: "the settings were changed by someone else since you opened them; reload and try again"}
	}
	if err != nil {
		return httpapi.Settings{}, fmt.Errorf("store settings of %s: %w", orgID, err)
	}
	return o.show(ctx, orgID)
}

// validate checks an update and returns the document it stores.
func (o *orgSettings) validate(u httpapi.SettingsUpdate) (settingsDoc, error) {
	known := tmpl.KnownCapabilities()
	for name := range u.Switches {
		if !slices.Contains(known, name) {
			return settingsDoc{}, fmt.Errorf("switches: %q is not a switch (known: %s)", name, strings.Join(known, ", "))
		}
	}
	if !slices.Contains(o.modes(), u.NetworkMode) {
		if u.NetworkMode == "self-hosted" {
			return settingsDoc{}, errors.New("network_mode: this deployment allows only public mode (set network.mode: self-hosted in the server's config file to allow it)")
		}
		return settingsDoc{}, fmt.Errorf("network_mode: %q is not one of %s", u.NetworkMode, strings.Join(o.modes(), ", "))
	}
	b := o.base.Web
	if b.Disabled && !u.Web.Disabled {
		return settingsDoc{}, errors.New("web.disabled: web search is turned off for this deployment (web.disabled in the server's config file)")
	}
	if b.DuckDuckGoDisabled && !u.Web.DuckDuckGoDisabled {
		return settingsDoc{}, errors.New("web.duckduckgo_disabled: DuckDuckGo is turned off for this deployment (web.duckduckgo_disabled in the server's config file)")
	}
	for field, raw := range map[string]string{"web.searxng_url": u.Web.SearXNGURL, "web.iask_url": u.Web.IAskURL} {
		if err := checkEngineURL(raw); err != nil {
			return settingsDoc{}, fmt.Errorf("%s: %w", field, err)
		}
	}
	if u.Web.IAskURL != "" && u.Web.IAskURL != b.IAskURL && u.NetworkMode != "self-hosted" && !strings.HasPrefix(u.Web.IAskURL, "https://") {
		return settingsDoc{}, errors.New("web.iask_url: use https (it carries the IAsk key); plain http needs network mode self-hosted")
	}
	for _, p := range u.Web.ExcludeProviders {
		if !providerName.MatchString(p) {
			return settingsDoc{}, fmt.Errorf("web.exclude_providers: %q is not a model provider name (like openai or ollama)", p)
		}
	}
	if err := checkKeyChanges(u.SetKeys, u.ClearKeys); err != nil {
		return settingsDoc{}, err
	}
	sw := maps.Clone(u.Switches)
	if sw == nil {
		sw = map[string]bool{}
	}
	doc := settingsDoc{Switches: sw, Web: webDoc{
		Disabled:           override(u.Web.Disabled, b.Disabled),
		SearXNGURL:         override(u.Web.SearXNGURL, b.SearXNGURL),
		IAskURL:            override(u.Web.IAskURL, b.IAskURL),
		DuckDuckGoDisabled: override(u.Web.DuckDuckGoDisabled, b.DuckDuckGoDisabled),
	}}
	if u.NetworkMode != o.baseMode() {
		doc.NetworkMode = u.NetworkMode
	}
	ex := slices.Compact(slices.Sorted(slices.Values(u.Web.ExcludeProviders)))
	if !slices.Equal(ex, slices.Compact(slices.Sorted(slices.Values(b.ExcludeProviders)))) {
		if ex == nil {
			ex = []string{} // stored as [], not null (which would follow the deployment)
		}
		doc.Web.ExcludeProviders = &ex
	}
	return doc, nil
}

// checkEngineURL accepts "" or an http(s) URL without credentials.
func checkEngineURL(raw string) error {
	if raw == "" {
		return nil
	}
	if len(raw) > maxURLLen {
		return fmt.Errorf("longer than %d characters", maxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http or https URL")
	}
	if u.User != nil {
		return errors.New("credentials in the URL are not allowed (use the key fields)")
	}
	return nil
}

// checkKeyChanges checks names and values of key changes.
func checkKeyChanges(set map[string]string, clear []string) error {
	known := func(name string) bool {
		return slices.ContainsFunc(orgKeys, func(k keySpec) bool { return k.name == name })
	}
	for name, value := range set {
		switch {
		case !known(name):
			return fmt.Errorf("set_keys: %q is not a key name", name)
		case strings.TrimSpace(value) == "":
			return fmt.Errorf("set_keys: %s is empty (use clear_keys to remove a key)", name)
		case len(value) > maxKeyLen:
			return fmt.Errorf("set_keys: %s is longer than %d characters", name, maxKeyLen)
		case strings.ContainsAny(value, "\r\n"):
			return fmt.Errorf("set_keys: %s must be one line", name)
		}
	}
	for _, name := range clear {
		if !known(name) {
			return fmt.Errorf("clear_keys: %q is not a key name", name)
		}
		if _, ok := set[name]; ok {
			return fmt.Errorf("%s is both set and cleared", name)
		}
	}
	return nil
}

// mergeSwitches returns the agent's switches over the organisation's.
func mergeSwitches(org, agent map[string]bool) map[string]bool {
	out := maps.Clone(org)
	if out == nil {
		out = map[string]bool{}
	}
	maps.Copy(out, agent)
	return out
}
