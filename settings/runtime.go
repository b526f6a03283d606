package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
)

// Runtime is what one organisation's settings at one version amount to:
// the configuration in force, the opened keys, the switches and the
// built-in catalog for them. It is immutable and safe for concurrent use;
// every turn of that version shares it.
type Runtime struct {
	version int64
	// cfg is the deployment configuration with the organisation's
	// settings applied (network mode, web engines, provider keys).
	cfg      config.Config
	switches map[string]bool
	keys     map[string]string
	catalog  *registry.Catalog
	// doc is the stored document the runtime was built from, and
	// updatedAt its save time (a rotation changes neither; every save
	// stamps it).
	doc       []byte
	updatedAt time.Time
	// models are the models opened under cfg; nil opens none.
	models *runtimeModels
}

// Version is the settings version the runtime was built from; 0 for an
// organisation that never saved settings (the deployment's runtime).
func (r *Runtime) Version() int64 { return r.version }

// Config is the deployment's configuration with the organisation's
// settings applied: network mode, web engines and the model providers'
// keys. Its Providers map is the caller's; its other maps and slices are
// shared and must not be modified.
func (r *Runtime) Config() config.Config {
	c := r.cfg
	c.Providers = maps.Clone(c.Providers)
	return c
}

// Catalog is the built-in catalog under this configuration and keys
// (without the organisation's MCP tools). It is shared: read only.
func (r *Runtime) Catalog() *registry.Catalog { return r.catalog }

// Switches returns a copy of the organisation's feature switches; never
// nil.
func (r *Runtime) Switches() map[string]bool {
	out := maps.Clone(r.switches)
	if out == nil {
		out = map[string]bool{}
	}
	return out
}

// Keys returns a copy of the organisation's opened keys by name (such as
// "openai_api_key"); never nil. The values are secrets: never log them.
func (r *Runtime) Keys() map[string]string {
	out := maps.Clone(r.keys)
	if out == nil {
		out = map[string]string{}
	}
	return out
}

// KeyNames returns the names of the organisation's opened keys, sorted;
// never nil.
func (r *Runtime) KeyNames() []string {
	out := slices.Sorted(maps.Keys(r.keys))
	if out == nil {
		out = []string{}
	}
	return out
}

// Models opens models under the runtime's configuration (its provider
// keys), each once per runtime however many turns ask at once: a new
// settings version is a new Runtime and opens afresh. Nil when the
// Service was built without Config.Models. Safe for concurrent use.
func (r *Runtime) Models() ModelOpener {
	if r.models == nil {
		return nil
	}
	return r.models
}

// Mode is the network mode in force, for the web tools and MCP servers.
func (r *Runtime) Mode() netguard.Mode { return netguard.ParseMode(r.cfg.Network.Mode) }

// Runtime returns the organisation's runtime at its stored version. The
// store is read on every call; the runtime is built (keys opened, catalog
// built) once per organisation and version, however many callers ask at
// once. A stored document or key it cannot read is an error, except that
// when only the keys' sealing changed since the last runtime (a rotation
// under a key this process lacks) that runtime serves the new version and
// a warning is logged.
func (s *Service) Runtime(ctx context.Context, orgID string) (*Runtime, error) {
	st, err := s.st.GetOrgSettings(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("read settings of %s: %w", orgID, err)
	}
	if st.Version == 0 {
		return s.baseRuntime, nil
	}
	if r := s.cached(orgID, st.Version); r != nil {
		return r, nil
	}
	v, err, _ := s.flight.Do(orgID+"\x00"+strconv.FormatInt(st.Version, 10), func() (any, error) {
		if r := s.cached(orgID, st.Version); r != nil {
			return r, nil // built by a flight that ended after our check
		}
		return s.buildRuntime(st)
	})
	if err != nil {
		return nil, err
	}
	return v.(*Runtime), nil
}

// Mode is the network mode in force for an organisation (see Runtime).
func (s *Service) Mode(ctx context.Context, orgID string) (netguard.Mode, error) {
	r, err := s.Runtime(ctx, orgID)
	if err != nil {
		return netguard.Public, err
	}
	return r.Mode(), nil
}

// cached returns the organisation's runtime when it is of version, else
// nil.
func (s *Service) cached(orgID string, version int64) *Runtime {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runtimes[orgID]; ok && r.version == version {
		return r
	}
	return nil
}

// buildRuntime builds the runtime of stored settings and keeps it as the
// organisation's unless a newer one is kept already.
func (s *Service) buildRuntime(st store.OrgSettings) (*Runtime, error) {
	s.mu.Lock()
	prev := s.runtimes[st.OrgID]
	s.mu.Unlock()
	r, err := s.newRuntime(st)
	if err != nil {
		if prev == nil || !prev.sameSettings(st) {
			return nil, err
		}
		// Only the sealing changed (quiver secrets rotate ran under a key
		// this process was not started with): the keys it opened before
		// are still the keys. Restart with the new keyring to read them.
		s.logger.Warn("settings keys re-encrypted under a key this server does not have; using the keys read before (restart with the new keyring)", "org", st.OrgID, "err", err)
		cp := *prev
		cp.version = st.Version
		cp.models = s.newModels(cp.cfg) // a new version opens afresh
		r = &cp
	}
	s.mu.Lock()
	if cur, ok := s.runtimes[st.OrgID]; !ok || cur.version < r.version {
		s.runtimes[st.OrgID] = r
	}
	s.mu.Unlock()
	return r, nil
}

// newRuntime opens the keys of stored settings, applies them and the
// document to the deployment's configuration, and builds the catalog.
func (s *Service) newRuntime(st store.OrgSettings) (*Runtime, error) {
	var doc document
	if err := json.Unmarshal(st.Doc, &doc); err != nil {
		return nil, fmt.Errorf("settings of %s: %w", st.OrgID, err)
	}
	keys := make(map[string]string, len(st.Secrets))
	for name, sealed := range st.Secrets {
		if s.kr == nil {
			return nil, fmt.Errorf("settings of %s: keys are stored but no encryption key is configured", st.OrgID)
		}
		pt, err := s.kr.Open(sealed, SecretAAD(st.OrgID, name))
		if err != nil {
			return nil, fmt.Errorf("settings of %s: key %s: %w", st.OrgID, name, err)
		}
		keys[name] = string(pt)
	}
	cfg := s.apply(doc, keys)
	// The connections' keys reach their models through cfg only: the
	// catalog and the turn's backends see the other keys.
	keys = withoutConnectionKeys(keys)
	return &Runtime{
		version: st.Version, cfg: cfg, switches: doc.Switches, keys: keys,
		catalog: s.build(cfg, keys), doc: slices.Clone(st.Doc), updatedAt: st.UpdatedAt,
		models: s.newModels(cfg),
	}, nil
}

// newModels returns the models of a runtime under cfg: nil when the
// Service opens none.
func (s *Service) newModels(cfg config.Config) *runtimeModels {
	if s.models == nil {
		return nil
	}
	cfg.Providers = maps.Clone(cfg.Providers)
	return newRuntimeModels(s.models(cfg))
}

// sameSettings reports whether stored settings say what r was built from:
// no save since (a rotation keeps UpdatedAt), the same document and the
// same key names (their sealing may differ).
func (r *Runtime) sameSettings(st store.OrgSettings) bool {
	if !r.updatedAt.Equal(st.UpdatedAt) || !bytes.Equal(r.doc, st.Doc) || len(r.keys) != len(st.Secrets) {
		return false
	}
	for name := range st.Secrets {
		if _, ok := r.keys[name]; !ok {
			return false
		}
	}
	return true
}
