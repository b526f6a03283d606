package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// DefaultSlots is how many servers an organisation may register when
// RegistrationsConfig.Slots is zero.
const DefaultSlots = 10

// RegistrationsConfig configures Registrations.
type RegistrationsConfig struct {
	// Store holds the registrations. Required.
	Store store.MCPServers
	// Keyring seals auth tokens. Nil means no key is configured: a server
	// with a token cannot be added, nor a stored token used.
	Keyring *secret.Keyring
	// Pool runs Add's connection test and closes the connections of a
	// server disabled or removed. Required.
	Pool *Pool
	// Slots is how many servers one organisation may register, enabled
	// or not; zero means DefaultSlots.
	Slots int
	// Now stamps the rows; nil means clock.Now.
	Now func() time.Time
	// Logger receives registration events; nil discards them.
	Logger *slog.Logger
	// IDs makes registration IDs, with an empty prefix (a registration
	// ID is bare lower-case hex); nil means ids.Random, 20 hex digits.
	IDs ids.Source
	// RecheckTTL is how long a registration read to re-check a call is
	// reused by the next calls (see recheck); zero means
	// DefaultRecheckTTL, negative no reuse (every call reads the store).
	// This process's own changes are seen at once; a change made by
	// another replica within RecheckTTL.
	RecheckTTL time.Duration
}

// Registrations administers the MCP servers users register for their
// organisations: adding (validated, connection-tested, token sealed),
// listing, enabling, disabling and removing; and, for toolsets, reading
// the enabled ones, unsealing their tokens and refreshing their stored
// tool snapshots in the background. It is safe for concurrent use; Close
// it when done.
type Registrations struct {
	cfg RegistrationsConfig
	// refreshing holds registration IDs whose snapshot write is in flight
	// in this process: it only keeps one replica from writing a snapshot
	// twice at once (another replica's write is harmless: same names).
	refreshing sync.Map
	bg         sync.WaitGroup
	// bgMu guards closing: once Close has begun no background write
	// starts (WaitGroup.Go must not race Wait).
	bgMu    sync.Mutex
	closing bool
	// checks are the registrations calls' re-checks read.
	checks recheckCache
}

// NewRegistrations returns Registrations over cfg.Store and cfg.Pool.
func NewRegistrations(cfg RegistrationsConfig) *Registrations {
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.IDs = ids.OrRandom(cfg.IDs)
	if cfg.Slots <= 0 {
		cfg.Slots = DefaultSlots
	}
	if cfg.RecheckTTL == 0 {
		cfg.RecheckTTL = DefaultRecheckTTL
	}
	return &Registrations{cfg: cfg, checks: recheckCache{ttl: cfg.RecheckTTL}}
}

// Error is a refusal meant for the person registering a server: a field,
// a rule or the server itself said no. Its message is sanitised.
type Error struct {
	Msg string
	// Err is the store rule behind the refusal (store.ErrNameTaken,
	// ErrFamilyInUse, ErrSlotsFull, ErrNotFound), for errors.Is; nil for
	// other refusals.
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the store rule behind the refusal, if any.
func (e *Error) Unwrap() error { return e.Err }

func refusef(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Refusal is how every surface tells a refusal from a failure: ok
// reports that err holds an *Error (a field, a rule, the network policy
// or the server said no; the caller's fault), msg is its sanitised
// message for people, and rule is the store rule behind it
// (store.ErrNameTaken, ErrFamilyInUse, ErrSlotsFull or ErrNotFound), nil
// for the other refusals. The CLI shows msg as bad input; the HTTP API
// answers a rule with its own status and the other refusals as bad
// input. Any other error (a store or key failure) is not a refusal.
func Refusal(err error) (msg string, rule error, ok bool) {
	var re *Error
	if !errors.As(err, &re) {
		return "", nil, false
	}
	return re.Msg, re.Err, true
}

// TokenAAD is the additional data that binds a sealed token to its row
// (organisation and registration ID): a ciphertext copied to another row
// does not open.
func TokenAAD(orgID, id string) []byte {
	return []byte("mcp_server/" + orgID + "/" + id + "/token")
}

// Add registers a server for an organisation whose network mode is mode
// (the organisation's, as the request found it), all or nothing, in this
// order: validate the fields; refuse a second enabled server of a typed
// family; enforce the slot limit; check the URL against the network
// policy of mode; connect under mode and discover the tools; store (the
// family and slot rules are checked again in the store's transaction).
// The new server is enabled. Refusals are *Error with sanitised messages;
// a mode the deployment does not allow is an error, never another mode.
// The organisation counts as being in mode from then on (see NewToolset).
func (r *Registrations) Add(ctx context.Context, orgID string, mode netguard.Mode, reg Registration) (store.MCPServer, error) {
	reg, err := reg.normalise()
	if err != nil {
		return store.MCPServer{}, &Error{Msg: err.Error()}
	}
	if reg.Token != "" && r.cfg.Keyring == nil {
		return store.MCPServer{}, refusef("token: no encryption key is configured, so tokens cannot be stored (set secrets.key_file)")
	}
	existing, err := r.cfg.Store.ListMCPServers(ctx, orgID)
	if err != nil {
		return store.MCPServer{}, fmt.Errorf("list servers: %w", err)
	}
	if err := r.checkRules(existing, reg); err != nil {
		return store.MCPServer{}, err
	}
	r.cfg.Pool.observe(orgID, mode)
	n, err := r.cfg.Pool.network(mode)
	if err != nil {
		return store.MCPServer{}, fmt.Errorf("add server: %w", err)
	}
	conn, err := r.cfg.Pool.dialChecked(ctx, n, reg.URL, reg.Token)
	if err != nil {
		return store.MCPServer{}, err
	}
	defer conn.Close()
	rec, err := r.record(orgID, reg, conn)
	if err != nil {
		return store.MCPServer{}, err
	}
	defer r.checks.forget(orgID, rec.Name)
	if err := r.cfg.Store.CreateMCPServer(ctx, rec, r.cfg.Slots); err != nil {
		return store.MCPServer{}, storeRefusal(err, reg.Name, reg.Type, r.cfg.Slots)
	}
	r.cfg.Logger.Info("mcp server added", "org", orgID, "server", rec.Name, "origin", Origin(rec.URL), "tools", len(rec.Tools))
	return rec, nil
}

// ModeSource gives an organisation's network mode as its settings hold
// it now (settings.Service.Mode).
type ModeSource interface {
	Mode(ctx context.Context, orgID string) (netguard.Mode, error)
}

// AddUnder is Add for a surface that has not read the organisation's
// network mode (the CLI, the HTTP API): the fields are validated first,
// so a bad one is an *Error and nothing is read, then the mode is read
// from modes, then the server is added under it (see Add).
func (r *Registrations) AddUnder(ctx context.Context, orgID string, modes ModeSource, reg Registration) (store.MCPServer, error) {
	if err := reg.Validate(); err != nil {
		return store.MCPServer{}, &Error{Msg: err.Error()}
	}
	mode, err := modes.Mode(ctx, orgID)
	if err != nil {
		return store.MCPServer{}, err
	}
	return r.Add(ctx, orgID, mode, reg)
}

// record is the row Add stores for a normalised registration whose
// connection test gave conn: enabled, its token sealed to the row.
func (r *Registrations) record(orgID string, reg Registration, conn *Conn) (store.MCPServer, error) {
	now := r.cfg.Now().UTC()
	rec := store.MCPServer{
		ID: r.cfg.IDs.New(""), OrgID: orgID, Name: reg.Name, URL: reg.URL, Type: reg.Type, Enabled: true,
		Tools: boundSnapshot(distinctNames(conn.Tools())), CreatedAt: now, UpdatedAt: now, DiscoveredAt: now,
	}
	if reg.Token != "" {
		sealed, err := r.cfg.Keyring.Seal([]byte(reg.Token), TokenAAD(orgID, rec.ID))
		if err != nil {
			return store.MCPServer{}, fmt.Errorf("seal token: %w", err)
		}
		rec.Token = sealed
	}
	return rec, nil
}

// checkRules applies the name, family and slot rules to a new registration
// against the organisation's current ones.
func (r *Registrations) checkRules(existing []store.MCPServer, reg Registration) error {
	for _, e := range existing {
		if e.Name == reg.Name {
			return &Error{Msg: fmt.Sprintf("name: %q is already registered", reg.Name), Err: store.ErrNameTaken}
		}
	}
	if reg.Type != store.MCPGeneral {
		for _, e := range existing {
			if e.Enabled && e.Type == reg.Type {
				return &Error{Msg: fmt.Sprintf("type: %s is already served by the enabled server %q; disable it first", reg.Type, e.Name), Err: store.ErrFamilyInUse}
			}
		}
	}
	if len(existing) >= r.cfg.Slots {
		return &Error{Msg: fmt.Sprintf("limit: this organisation already has %d servers (the limit, disabled ones included); remove one first", r.cfg.Slots), Err: store.ErrSlotsFull}
	}
	return nil
}

// storeRefusal turns the store's rule errors into refusals.
func storeRefusal(err error, name, typ string, slots int) error {
	rule := func(sentinel error, format string, args ...any) error {
		return &Error{Msg: fmt.Sprintf(format, args...), Err: sentinel}
	}
	switch {
	case errors.Is(err, store.ErrNameTaken):
		return rule(store.ErrNameTaken, "name: %q is already registered", name)
	case errors.Is(err, store.ErrFamilyInUse):
		return rule(store.ErrFamilyInUse, "type: another enabled server already serves %s; disable it first", typ)
	case errors.Is(err, store.ErrSlotsFull):
		return rule(store.ErrSlotsFull, "limit: this organisation already has %d servers (the limit, disabled ones included); remove one first", slots)
	case errors.Is(err, store.ErrNotFound):
		return rule(store.ErrNotFound, "no server named %q", name)
	}
	return err
}

// List returns an organisation's registrations from stored metadata only;
// it never contacts a server. Tokens are left sealed.
func (r *Registrations) List(ctx context.Context, orgID string) ([]store.MCPServer, error) {
	return r.cfg.Store.ListMCPServers(ctx, orgID)
}

// SetEnabled enables or disables a server. Disabling closes its connection
// at once and clears its cooldown. An unknown name is an *Error wrapping
// store.ErrNotFound; enabling beside another enabled server of its typed
// family one wrapping store.ErrFamilyInUse.
func (r *Registrations) SetEnabled(ctx context.Context, orgID, name string, enabled bool) error {
	rec, err := r.cfg.Store.GetMCPServer(ctx, orgID, name)
	if err != nil {
		return storeRefusal(err, name, "", r.cfg.Slots)
	}
	defer r.checks.forget(orgID, name)
	if err := r.cfg.Store.SetMCPServerEnabled(ctx, orgID, name, enabled, r.cfg.Now().UTC()); err != nil {
		return storeRefusal(err, name, rec.Type, r.cfg.Slots)
	}
	if !enabled {
		r.cfg.Pool.drop(rec.ID)
	}
	return nil
}

// Remove deletes a server, closes its connection and frees its slot.
// confirmed must be true: deleting is never implicit. An unknown name is
// an *Error wrapping store.ErrNotFound.
func (r *Registrations) Remove(ctx context.Context, orgID, name string, confirmed bool) error {
	if !confirmed {
		return refusef("removing %q needs explicit confirmation", name)
	}
	rec, err := r.cfg.Store.GetMCPServer(ctx, orgID, name)
	if err != nil {
		return storeRefusal(err, name, "", r.cfg.Slots)
	}
	defer r.checks.forget(orgID, name)
	if err := r.cfg.Store.DeleteMCPServer(ctx, orgID, name); err != nil {
		return storeRefusal(err, name, "", r.cfg.Slots)
	}
	r.cfg.Pool.drop(rec.ID)
	return nil
}

// Close waits for the background snapshot writes; none starts after it
// began. It always returns nil.
func (r *Registrations) Close() error {
	r.bgMu.Lock()
	r.closing = true
	r.bgMu.Unlock()
	r.bg.Wait()
	return nil
}

// enabled returns an organisation's enabled registrations.
func (r *Registrations) enabled(ctx context.Context, orgID string) ([]store.MCPServer, error) {
	return r.cfg.Store.ListEnabledMCPServers(ctx, orgID)
}

// openToken unseals a registration's token; "" when it has none.
func (r *Registrations) openToken(reg store.MCPServer) (secret.Redacted, error) {
	if reg.Token == "" {
		return "", nil
	}
	if r.cfg.Keyring == nil {
		return "", errors.New("its auth token cannot be read: no encryption key is configured")
	}
	pt, err := r.cfg.Keyring.Open(reg.Token, TokenAAD(reg.OrgID, reg.ID))
	if err != nil {
		return "", fmt.Errorf("its auth token cannot be read: %v", err)
	}
	return secret.Redacted(pt), nil
}

// recheck refuses a call when the registration a turn routed was removed,
// disabled or replaced since: at once when this process made the change,
// within RecheckTTL when another replica did (current's cache).
func (r *Registrations) recheck(ctx context.Context, reg store.MCPServer) error {
	cur, err := r.current(ctx, reg.OrgID, reg.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("the MCP server %s was removed", reg.Name)
	case err != nil:
		return tool.Infra(fmt.Errorf("look up MCP server: %w", err))
	case cur.ID != reg.ID || cur.URL != reg.URL || cur.Type != reg.Type:
		// The sealed token is not compared: a key rotation re-seals it
		// without changing the registration (the pool key covers it).
		return fmt.Errorf("the MCP server %s changed since this turn started; ask again", reg.Name)
	case !cur.Enabled:
		return fmt.Errorf("the MCP server %s is disabled", reg.Name)
	}
	return nil
}

// refreshSnapshot writes a registration's discovered names in the
// background when they differ from the stored ones. A failed write is
// logged and changes nothing else.
func (r *Registrations) refreshSnapshot(reg store.MCPServer, names []string) {
	bounded := boundSnapshot(names)
	if reg.Tools != nil && slices.Equal(reg.Tools, bounded) {
		return
	}
	if _, busy := r.refreshing.LoadOrStore(reg.ID, true); busy {
		return
	}
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	if r.closing {
		r.refreshing.Delete(reg.ID)
		return
	}
	r.bg.Go(func() {
		defer r.refreshing.Delete(reg.ID)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := r.cfg.Store.SetMCPServerTools(ctx, reg.OrgID, reg.ID, bounded, r.cfg.Now().UTC()); err != nil {
			r.cfg.Logger.Warn("mcp snapshot write failed", "server", reg.Name, "err", err)
		}
	})
}
