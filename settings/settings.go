// Package settings is an organisation's settings document: what an admin
// changes on top of the deployment's configuration (feature switches, the
// network mode, the web engines, write-only API keys, and connections to
// its own OpenAI-compatible model servers, which it can test). It validates an
// update against the deployment's ceiling, seals keys at rest, and keeps,
// per organisation, the Runtime of the version in force: the configuration
// with the settings applied, the opened keys, the switches, the network
// mode, the built-in catalog and the models opened under them, built once
// per settings version. RotateKeys re-seals the stored keys under a new
// primary key.
//
// The package speaks its own types (View, Update, *InvalidError,
// ErrConflict); the HTTP API maps them to the wire.
package settings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tmpl"
)

// Repository is the part of the store the settings use.
type Repository interface {
	// GetOrgSettings is store.Settings.GetOrgSettings.
	GetOrgSettings(ctx context.Context, orgID string) (store.OrgSettings, error)
	// PutOrgSettings is store.Settings.PutOrgSettings.
	PutOrgSettings(ctx context.Context, s store.OrgSettings) (int64, error)
}

// Config is what a Service is built from.
type Config struct {
	// Store holds the documents and the sealed keys. Required.
	Store Repository
	// Keyring seals and opens keys. Nil means no keyring: a save that
	// sets a key is refused, and stored keys cannot be opened.
	Keyring *secret.Keyring
	// Base is the deployment's configuration: the defaults every
	// organisation follows, and the ceiling none can lift.
	Base config.Config
	// Build makes the built-in catalog for a configuration in force and
	// the organisation's opened keys (nil for the deployment's own
	// catalog). It is called once by New and then once per organisation
	// and settings version. Required.
	Build func(cfg config.Config, keys map[string]string) *registry.Catalog
	// Models returns the opener of models under a configuration in
	// force (the deployment's, or an organisation's with its keys
	// applied); each Runtime caches what it opens (see Runtime.Models).
	// It is called once per Runtime built and must not keep cfg's maps
	// beyond reading them. Nil means runtimes open no models.
	Models func(cfg config.Config) ModelOpener
	// ProviderKey returns the deployment's own key for a model provider
	// (from Base or the environment), "" when it has none; it only decides
	// whether a View shows a model key as set from the environment. Nil
	// means the deployment has no provider keys.
	ProviderKey func(provider string) string
	// Getenv reads the environment (the Brave and IAsk key variables of
	// Base). Nil reads nothing.
	Getenv func(string) string
	// Now stamps saves. Nil means clock.Now.
	Now func() time.Time
	// Logger gets the warning about keys rotated under a keyring this
	// process lacks. Nil discards.
	Logger *slog.Logger
	// Resolver resolves the host names of connections, when they are
	// saved and tested; nil is the system's.
	Resolver netguard.Resolver
	// ConnectionTimeout bounds a connection test (TestConnection), the
	// whole request; zero means DefaultConnectionTimeout.
	ConnectionTimeout time.Duration
}

// DefaultConnectionTimeout bounds a connection test: a person waits on
// the answer.
const DefaultConnectionTimeout = 10 * time.Second

// Service reads and saves organisations' settings and keeps each
// organisation's Runtime of its latest version. It is safe for concurrent
// use.
type Service struct {
	st          Repository
	kr          *secret.Keyring
	base        config.Config
	build       func(config.Config, map[string]string) *registry.Catalog
	models      func(config.Config) ModelOpener
	providerKey func(string) string
	getenv      func(string) string
	now         func() time.Time
	logger      *slog.Logger
	resolver    netguard.Resolver
	connTimeout time.Duration

	// flight makes concurrent first reads of one version build once.
	flight singleflight.Group
	mu     sync.Mutex
	// runtimes are the latest built Runtime of each organisation. A
	// per-process cache, harmless when stale: every turn reads the stored
	// settings version first (Runtime) and builds afresh when another
	// replica saved a newer one, so a change made anywhere takes effect
	// everywhere by version, without a restart.
	runtimes map[string]*Runtime
	// baseRuntime serves organisations that never saved settings.
	baseRuntime *Runtime
}

// New returns a Service over c, building the deployment's own catalog
// (c.Build with c.Base) now.
func New(c Config) *Service {
	s := &Service{
		st: c.Store, kr: c.Keyring, base: c.Base, build: c.Build, models: c.Models,
		providerKey: c.ProviderKey, getenv: c.Getenv, now: c.Now, logger: c.Logger,
		resolver: c.Resolver, connTimeout: c.ConnectionTimeout, runtimes: map[string]*Runtime{},
	}
	if s.connTimeout <= 0 {
		s.connTimeout = DefaultConnectionTimeout
	}
	if s.providerKey == nil {
		s.providerKey = func(string) string { return "" }
	}
	if s.getenv == nil {
		s.getenv = func(string) string { return "" }
	}
	if s.now == nil {
		s.now = clock.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.baseRuntime = &Runtime{
		cfg: c.Base, switches: map[string]bool{}, keys: map[string]string{}, catalog: c.Build(c.Base, nil),
		models: s.newModels(c.Base),
	}
	return s
}

// Show returns the organisation's settings in force. A stored document it
// cannot decode is an error.
func (s *Service) Show(ctx context.Context, orgID string) (View, error) {
	st, doc, err := s.read(ctx, orgID)
	if err != nil {
		return View{}, err
	}
	if doc.Switches == nil {
		doc.Switches = map[string]bool{}
	}
	web := s.effectiveWeb(doc.Web)
	if web.ExcludeProviders == nil {
		web.ExcludeProviders = []string{}
	}
	out := View{
		Version: st.Version, Switches: doc.Switches, SwitchNames: tmpl.KnownCapabilities(),
		SwitchInfo:  s.baseRuntime.catalog.Switches(),
		NetworkMode: s.effectiveMode(doc.NetworkMode), NetworkModes: s.modes(), Web: web, UpdatedAt: st.UpdatedAt,
		Connections: connectionViews(doc.Connections, st.Secrets), ServerConnections: s.serverConnections(),
		EmbeddingModel: s.base.EmbeddingRef(),
	}
	for _, k := range keySpecs {
		ks := KeyState{Name: k.name, Label: k.label}
		switch {
		case st.Secrets[k.name] != "":
			ks.Set, ks.Source = true, SourceSettings
		case s.fromEnvironment(k) && (k.name != "iask_api_key" || web.IAskURL == s.base.Web.IAskURL):
			ks.Set, ks.Source = true, SourceEnvironment
		}
		out.Keys = append(out.Keys, ks)
	}
	return out, nil
}

// read returns the organisation's stored settings and their document
// (the zero document when never saved). A document it cannot decode is
// an error.
func (s *Service) read(ctx context.Context, orgID string) (store.OrgSettings, document, error) {
	st, err := s.st.GetOrgSettings(ctx, orgID)
	if err != nil {
		return st, document{}, fmt.Errorf("read settings of %s: %w", orgID, err)
	}
	var doc document
	if st.Version > 0 {
		if err := json.Unmarshal(st.Doc, &doc); err != nil {
			return st, document{}, fmt.Errorf("settings of %s: %w", orgID, err)
		}
	}
	return st, doc, nil
}

// Update validates u and saves it as one write, sealing the keys it sets,
// and returns the settings now in force. A value the settings refuse is an
// *InvalidError, and a u.Version that is not the stored one ErrConflict;
// both write nothing. The next Runtime of the organisation is built from
// the saved version.
func (s *Service) Update(ctx context.Context, orgID string, u Update) (View, error) {
	doc, err := s.validate(ctx, u)
	if err != nil {
		return View{}, err
	}
	cur, stored, err := s.read(ctx, orgID)
	if err != nil {
		return View{}, err
	}
	if cur.Version != u.Version {
		return View{}, ErrConflict
	}
	secrets, err := s.applyKeyChanges(orgID, cur.Secrets, u)
	if err != nil {
		return View{}, err
	}
	if err := s.connectionKeys(orgID, stored.Connections, secrets, u); err != nil {
		return View{}, err
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return View{}, fmt.Errorf("encode settings: %w", err)
	}
	_, err = s.st.PutOrgSettings(ctx, store.OrgSettings{OrgID: orgID, Doc: raw, Secrets: secrets, Version: u.Version, UpdatedAt: s.now()})
	if errors.Is(err, store.ErrConflict) {
		return View{}, ErrConflict
	}
	if err != nil {
		return View{}, fmt.Errorf("store settings of %s: %w", orgID, err)
	}
	return s.Show(ctx, orgID)
}

// applyKeyChanges returns the sealed keys after u's changes, leaving
// stored untouched. Setting a key without a keyring is an *InvalidError.
func (s *Service) applyKeyChanges(orgID string, stored map[string]string, u Update) (map[string]string, error) {
	secrets := maps.Clone(stored)
	if secrets == nil {
		secrets = map[string]string{}
	}
	for _, name := range u.ClearKeys {
		delete(secrets, name)
	}
	for name, value := range u.SetKeys {
		if s.kr == nil {
			return nil, invalid("", "keys cannot be stored: no encryption key is configured (secrets.key_file or secrets.keys_env)")
		}
		sealed, err := s.kr.Seal([]byte(strings.TrimSpace(value)), SecretAAD(orgID, name))
		if err != nil {
			return nil, fmt.Errorf("seal %s: %w", name, err)
		}
		secrets[name] = sealed
	}
	return secrets, nil
}

// fromEnvironment reports whether the deployment supplies the key.
func (s *Service) fromEnvironment(k keySpec) bool {
	if k.provider != "" {
		return s.providerKey(k.provider) != ""
	}
	switch k.name {
	case "brave_api_key":
		env := s.base.Web.BraveKeyEnv
		if env == "" {
			env = "BRAVE_API_KEY"
		}
		return s.getenv(env) != ""
	case "iask_api_key":
		return s.base.Web.IAskKeyEnv != "" && s.getenv(s.base.Web.IAskKeyEnv) != ""
	}
	return false
}
