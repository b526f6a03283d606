// Package store defines Quiver's repositories and the records they hold.
// Implementations (store/sqlite, later store/postgres) pass the shared
// conformance suite in store/storetest. All methods are safe for concurrent
// use and honour ctx cancellation.
package store

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"
)

// ErrNotFound is returned (wrapped) when a record does not exist in the
// scope it was asked for. It never says whether the record exists elsewhere.
var ErrNotFound = errors.New("not found")

// Store is every repository together.
type Store interface {
	Conversations
	Turns
	Messages
	Results
	Usages
	MCPServers
	Intents
	Accounts
	Agents
	Settings
	// Close releases the store's resources.
	Close() error
}

// Conversation is a stored conversation, owned by one user.
type Conversation struct {
	ID     string
	OrgID  string
	UserID string
	Agent  string
	// Title is a short label for lists; empty until set.
	Title     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Conversations stores conversations.
type Conversations interface {
	// PutConversation inserts the conversation or replaces the stored one
	// with the same ID in the same organisation.
	PutConversation(ctx context.Context, c Conversation) error
	// ClaimConversation is how a turn enters a conversation: atomically, it
	// creates c when its organisation holds no conversation with c's ID,
	// and otherwise stamps c.UpdatedAt on the stored one only when c.UserID
	// owns it. It returns the conversation as stored afterwards, so the
	// caller learns by its UserID whether the conversation is theirs; one
	// owned by another user is returned unchanged. Two claims of a new ID
	// create it once, for one of them, and a claim never overwrites the
	// title, agent or owner a conversation already has.
	ClaimConversation(ctx context.Context, c Conversation) (Conversation, error)
	// GetConversation returns the conversation with that ID in that
	// organisation, or ErrNotFound.
	GetConversation(ctx context.Context, orgID, id string) (Conversation, error)
	// ListConversations returns the user's conversations in that
	// organisation, most recently updated first, at most limit (all when
	// limit <= 0).
	ListConversations(ctx context.Context, orgID, userID string, limit int) ([]Conversation, error)
}

// Turn statuses.
const (
	TurnRunning     = "running"
	TurnPaused      = "paused"
	TurnDone        = "done"
	TurnInterrupted = "interrupted"
	TurnFailed      = "failed"
)

// Turn is a stored turn: who started it, in which zone, with which toolset.
type Turn struct {
	ID             string
	OrgID          string
	UserID         string
	ConversationID string
	Agent          string
	// Model is the "provider:model" reference the turn runs on.
	Model string
	// Timezone is the IANA zone captured at turn start; "" means UTC.
	Timezone string
	// Payer is who is billed; data only.
	Payer string
	// Tools is the frozen toolset, in declaration order.
	Tools []string
	// Excluded is why each catalog tool was left out of Tools when the turn
	// started, in the order the toolset gave. nil means not recorded (a
	// turn stored before exclusions were); an empty non-nil slice, nothing
	// left out. A store keeps at most MaxTurnExclusions entries (the first
	// ones) and at most MaxExclusionReason bytes of each reason, cut on a
	// rune boundary; see BoundExclusions.
	Excluded []Exclusion
	// Declared is why each tool of Tools was declared, in declaration
	// order, when a gate (Deliberate Tool Mode) chose them ("always-on:
	// kept by deliberate tool mode", "opened by: search (…)"). nil means
	// no gate applied (or not recorded); bounded as Excluded is.
	Declared []Exclusion
	// Selected is how many tools selection gave the turn before a gate
	// narrowed them to Tools (registry.Toolset.Selected); 0 when not
	// recorded, so a reader takes at least len(Tools).
	Selected int
	// Status is one of the Turn… statuses.
	Status string
	// Question and Suggested hold the pending clarifying question of a
	// paused turn; empty otherwise.
	Question  string
	Suggested string
	// Steps is the number of model steps taken so far.
	Steps     int
	StartedAt time.Time
	// EndedAt is zero while the turn runs or is paused.
	EndedAt time.Time
}

// Exclusion is one tool a turn left out and why, in the words of the
// toolset that left it out.
type Exclusion struct {
	Name   string
	Reason string
}

// Bounds on what a store keeps of Turn.Excluded: a catalog with many MCP
// tools, or a reason quoting a long server error, must not make every
// turn record large.
const (
	MaxTurnExclusions  = 500
	MaxExclusionReason = 500 // bytes
)

// BoundExclusions returns ex as a store keeps it: its first
// MaxTurnExclusions entries, each reason cut to at most MaxExclusionReason
// bytes without splitting a rune. nil stays nil and empty stays empty; ex
// itself is not modified.
func BoundExclusions(ex []Exclusion) []Exclusion {
	if ex == nil {
		return nil
	}
	out := make([]Exclusion, 0, min(len(ex), MaxTurnExclusions))
	for _, e := range ex[:min(len(ex), MaxTurnExclusions)] {
		e.Reason = truncateUTF8(e.Reason, MaxExclusionReason)
		out = append(out, e)
	}
	return out
}

// truncateUTF8 returns the longest prefix of s of at most n bytes that
// does not end inside a multi-byte rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Turns stores turns.
type Turns interface {
	// PutTurn inserts the turn or replaces the stored one with the same ID,
	// keeping t.Excluded and t.Declared as BoundExclusions returns them.
	PutTurn(ctx context.Context, t Turn) error
	// GetTurn returns the turn with that ID in that organisation.
	GetTurn(ctx context.Context, orgID, id string) (Turn, error)
	// InterruptTurns marks every running turn, in every organisation,
	// started before startedBefore as TurnInterrupted ended at `at`, and
	// returns how many: a server starting records the turns a crash cut
	// short. Paused and finished turns are left alone.
	InterruptTurns(ctx context.Context, startedBefore, at time.Time) (int, error)
}

// RoleThought marks a thought-log entry: a note for the people who run the
// agent (why a tool was available), never sent to a model nor shown by
// read_transcript.
const RoleThought = "thought"

// Message is one transcript entry.
type Message struct {
	ConversationID string
	TurnID         string
	// Seq orders messages within a conversation; AppendMessage assigns it.
	Seq int64
	// Role is "user", "context", "assistant", "tool_call", "tool" or
	// RoleThought.
	// An assistant reply that calls tools is stored as an "assistant" message
	// (its text, possibly empty) followed by one "tool_call" message per
	// call, whose Content is the call's JSON arguments.
	Role string
	// Content is the text; for tool messages, the (possibly truncated) result.
	Content string
	// ToolName and ToolCallID are set on tool calls and tool results.
	ToolName   string
	ToolCallID string
	// Ref names the full result body in the result store when Content was
	// truncated (tool messages only).
	Ref string
	// IsError marks a tool result that reports a failure.
	IsError   bool
	CreatedAt time.Time
}

// Messages stores transcripts.
type Messages interface {
	// AppendMessage appends m to its conversation and returns its Seq.
	AppendMessage(ctx context.Context, orgID string, m Message) (int64, error)
	// AppendMessages appends ms in order, all or none, and returns their
	// Seqs. The messages may belong to different conversations.
	AppendMessages(ctx context.Context, orgID string, ms []Message) ([]int64, error)
	// ListMessages returns the conversation's messages with Seq < beforeSeq
	// (all when beforeSeq <= 0), oldest first.
	ListMessages(ctx context.Context, orgID, conversationID string, beforeSeq int64) ([]Message, error)
}

// Result is a stored tool result body.
type Result struct {
	// Ref is the opaque reference the model sees ("res_…").
	Ref            string
	OrgID          string
	ConversationID string
	TurnID         string
	Tool           string
	Body           string
	CreatedAt      time.Time
}

// Results stores full tool result bodies.
type Results interface {
	// PutResult stores r; a Ref that already exists is an error.
	PutResult(ctx context.Context, r Result) error
	// GetResult returns the result with that ref in that organisation and
	// conversation, or ErrNotFound.
	GetResult(ctx context.Context, orgID, conversationID, ref string) (Result, error)
}

// Usage is what one model call consumed, and what it cost.
type Usage struct {
	OrgID          string
	ConversationID string
	TurnID         string
	// Payer is who is billed, copied from the turn.
	Payer string
	// Model is the "provider:model" reference called.
	Model string
	// Step numbers the model call within its turn, from 1.
	Step              int
	InputTokens       int64
	CachedInputTokens int64
	CacheWriteTokens  int64
	OutputTokens      int64
	// CostMicros is the cost in millionths of the configured currency unit
	// (USD unless configured otherwise); zero when no price is configured.
	CostMicros int64
	CreatedAt  time.Time
}

// UsageTotal sums usage records.
type UsageTotal struct {
	Calls             int64
	InputTokens       int64
	CachedInputTokens int64
	CacheWriteTokens  int64
	OutputTokens      int64
	CostMicros        int64
}

// Usages stores usage records.
type Usages interface {
	// PutUsage appends one record.
	PutUsage(ctx context.Context, u Usage) error
	// ListUsage returns the turn's records in that organisation, by Step.
	ListUsage(ctx context.Context, orgID, turnID string) ([]Usage, error)
	// SumUsage totals the payer's records in that organisation created in
	// [from, to).
	SumUsage(ctx context.Context, orgID, payer string, from, to time.Time) (UsageTotal, error)
}

// MCP server types: which built-in family a registered server stands in for.
const (
	MCPGeneral    = "general"
	MCPWebSearch  = "web_search"
	MCPURLFetcher = "url_fetcher"
)

// Sentinel errors of MCPServers, returned wrapped; test with errors.Is.
var (
	// ErrNameTaken reports a server name already registered in the
	// organisation.
	ErrNameTaken = errors.New("name already registered")
	// ErrFamilyInUse reports a second enabled server of a typed family
	// (web_search, url_fetcher) in one organisation.
	ErrFamilyInUse = errors.New("another enabled server already has this type")
	// ErrSlotsFull reports an organisation at its server limit.
	ErrSlotsFull = errors.New("server limit reached")
)

// MCPServer is a user-registered remote MCP server.
type MCPServer struct {
	// ID is assigned by the caller before Create (the sealed token is bound
	// to it); it never changes.
	ID string
	// OrgID is the community or organisation the server belongs to.
	OrgID string
	// Name is unique per organisation.
	Name string
	URL  string
	// Token is the sealed auth token (secret.Keyring.Seal output bound to
	// this row); "" means none. Stores never see a plaintext token.
	Token string
	// Type is MCPGeneral, MCPWebSearch or MCPURLFetcher.
	Type    string
	Enabled bool
	// Tools are the tool names from the last successful discovery: nil
	// means no successful discovery yet ("Discovery unknown"), an empty
	// non-nil slice a discovery that found none ("None discovered").
	Tools     []string
	CreatedAt time.Time
	UpdatedAt time.Time
	// DiscoveredAt is when Tools was last written; zero when never.
	DiscoveredAt time.Time
}

// MCPServers stores MCP server registrations. Rules that span rows (unique
// name, one enabled server per typed family, the slot limit) are checked
// inside the write's transaction, so concurrent writers cannot break them.
type MCPServers interface {
	// CreateMCPServer inserts s. It fails, writing nothing, with
	// ErrNameTaken when the name is registered in s.OrgID, ErrFamilyInUse
	// when s is enabled and typed and another enabled server of s.OrgID has
	// that type, and ErrSlotsFull when s.OrgID already has limit servers
	// (enabled or not; limit <= 0 means no limit).
	CreateMCPServer(ctx context.Context, s MCPServer, limit int) error
	// GetMCPServer returns the server with that name in that organisation,
	// or ErrNotFound.
	GetMCPServer(ctx context.Context, orgID, name string) (MCPServer, error)
	// ListMCPServers returns the organisation's servers ordered by name.
	ListMCPServers(ctx context.Context, orgID string) ([]MCPServer, error)
	// ListEnabledMCPServers returns the enabled servers of the organisation
	// ordered by name.
	ListEnabledMCPServers(ctx context.Context, orgID string) ([]MCPServer, error)
	// SetMCPServerEnabled enables or disables a server, stamping UpdatedAt
	// with at. Enabling fails with ErrFamilyInUse as in Create; an unknown
	// name gives ErrNotFound.
	SetMCPServerEnabled(ctx context.Context, orgID, name string, enabled bool, at time.Time) error
	// DeleteMCPServer removes a server, or returns ErrNotFound.
	DeleteMCPServer(ctx context.Context, orgID, name string) error
	// SetMCPServerTools records a discovery of the server with that ID:
	// tools (non-nil, or it is refused; at most 100 names) and DiscoveredAt = at. It reports
	// whether anything changed: the same names in the same order write
	// nothing. A server deleted meanwhile is not an error (changed=false).
	SetMCPServerTools(ctx context.Context, orgID, id string, tools []string, at time.Time) (changed bool, err error)
	// CountMCPTokens returns how many servers, in every organisation, hold
	// a sealed token.
	CountMCPTokens(ctx context.Context) (int, error)
	// RewrapMCPTokens calls rewrap for every server holding a token, in
	// every organisation, and stores what it returns in place of the
	// token when it differs, all in one transaction: when rewrap fails
	// for any server nothing is written and its error is returned. It
	// returns how many tokens changed.
	RewrapMCPTokens(ctx context.Context, rewrap func(s MCPServer) (string, error)) (int, error)
}

// Sentinel errors of Intents.
var (
	// ErrTriggerExists reports a custom trigger already stored for that
	// target.
	ErrTriggerExists = errors.New("trigger already exists")
	// ErrTriggerLimit reports a target at its custom trigger limit.
	ErrTriggerLimit = errors.New("trigger limit reached")
)

// IntentSettings are a community's Deliberate Tool Mode settings.
type IntentSettings struct {
	OrgID string
	// Enabled is the community toggle.
	Enabled bool
	// HistoryTurns is how many recent user messages are re-scanned
	// (0–10); -1 means not set (the default applies).
	HistoryTurns int
	// GateAlwaysOn is the opt-in to the mode gating the always-on helpers
	// too; false (the default) keeps them declared on every turn.
	GateAlwaysOn bool
	UpdatedAt    time.Time
}

// IntentTrigger is a community's custom trigger, stored normalised.
type IntentTrigger struct {
	OrgID     string
	Target    string
	Phrase    string
	CreatedAt time.Time
}

// Intents stores Deliberate Tool Mode state: community settings, custom
// triggers, users' overrides, and the targets each conversation opened.
type Intents interface {
	// GetIntentSettings returns the community's settings; a community that
	// never saved any gets {OrgID, Enabled: false, HistoryTurns: -1,
	// GateAlwaysOn: false} and no error.
	GetIntentSettings(ctx context.Context, orgID string) (IntentSettings, error)
	// PutIntentSettings inserts or replaces the community's settings;
	// HistoryTurns outside -1..10 is refused, writing nothing.
	PutIntentSettings(ctx context.Context, s IntentSettings) error
	// AddIntentTrigger stores a trigger. It fails, writing nothing, with
	// ErrTriggerExists for the same (target, phrase) and otherwise with
	// ErrTriggerLimit when the target already has limit triggers (limit
	// <= 0: no limit), both checked in the write's transaction. An empty
	// target or phrase is refused.
	AddIntentTrigger(ctx context.Context, t IntentTrigger, limit int) error
	// RemoveIntentTrigger deletes a trigger or returns ErrNotFound.
	RemoveIntentTrigger(ctx context.Context, orgID, target, phrase string) error
	// ListIntentTriggers returns the community's triggers ordered by
	// target, then phrase, in byte order.
	ListIntentTriggers(ctx context.Context, orgID string) ([]IntentTrigger, error)
	// GetUserIntentMode returns a user's override ("off", "follow", "on");
	// "follow" when none is stored.
	GetUserIntentMode(ctx context.Context, orgID, userID string) (string, error)
	// SetUserIntentMode stores a user's override: "off", "follow" or
	// "on"; anything else (including "") is refused, writing nothing.
	SetUserIntentMode(ctx context.Context, orgID, userID, mode string) error
	// OpenIntentTargets appends to the conversation's open targets those
	// of targets it does not hold yet, in the given order, atomically, and
	// returns the full list in the order the targets first opened. With
	// targets empty it only reads; a target repeated in one call opens
	// once. A conversation never seen starts empty.
	OpenIntentTargets(ctx context.Context, orgID, conversationID string, targets []string) ([]string, error)
}

// Roles a user may hold in an organisation.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Credential kinds.
const (
	// CredAPIToken is a bearer token for the HTTP API.
	CredAPIToken = "api_token"
	// CredSession is a web UI session (cookie), with its CSRF token.
	CredSession = "session"
	// CredLoginLink is a one-time login link, consumed on use.
	CredLoginLink = "login_link"
)

// ErrExists reports a record whose key is already taken.
var ErrExists = errors.New("already exists")

// ErrLastAdmin reports a change that would leave an organisation without
// an enabled admin.
var ErrLastAdmin = errors.New("the organisation's last admin")

// Org is an organisation (a community): every other record is scoped to one.
type Org struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// User is a person in one organisation.
type User struct {
	ID          string
	OrgID       string
	DisplayName string
	Department  string
	// Timezone is the user's IANA zone; "" means none set.
	Timezone string
	// Role is RoleAdmin or RoleMember.
	Role      string
	CreatedAt time.Time
	UpdatedAt time.Time
	// DisabledAt is when an admin disabled the user; zero means active.
	// A disabled user holds no credentials and cannot get new ones.
	DisabledAt time.Time
}

// Credential is a secret that authenticates a user: only its SHA-256 hash
// is stored, never the secret.
type Credential struct {
	// Hash is the lower-case hex SHA-256 of the secret; unique per Kind.
	Hash   string
	Kind   string
	OrgID  string
	UserID string
	// Label names an API token for people ("ci", "laptop"); empty otherwise.
	Label string
	// CSRF is a session's anti-forgery token (stored as is: it is not a
	// credential on its own); empty for other kinds.
	CSRF      string
	CreatedAt time.Time
	// ExpiresAt is when it stops working; zero means never.
	ExpiresAt time.Time
}

// Accounts stores organisations, users and their credentials.
type Accounts interface {
	// CreateOrg inserts an organisation; an ID in use gives ErrExists.
	CreateOrg(ctx context.Context, o Org) error
	// GetOrg returns an organisation or ErrNotFound.
	GetOrg(ctx context.Context, id string) (Org, error)
	// CountOrgs returns how many organisations exist (0 on first start).
	CountOrgs(ctx context.Context) (int, error)
	// CreateUser inserts a user and creds, the user's first credentials,
	// in one transaction: an ID in use in the organisation gives
	// ErrExists, a missing organisation ErrNotFound, a credential hash in
	// use for its kind ErrExists, each writing nothing (neither the user
	// nor any credential). Role must be RoleAdmin or RoleMember; each
	// credential must be for u (its OrgID and UserID) and u enabled when
	// there is any.
	CreateUser(ctx context.Context, u User, creds ...Credential) error
	// GetUser returns the user with that ID in that organisation, or
	// ErrNotFound.
	GetUser(ctx context.Context, orgID, id string) (User, error)
	// ListUsers returns the organisation's users ordered by ID.
	ListUsers(ctx context.Context, orgID string) ([]User, error)
	// ModifyUser reads the user with that ID in that organisation, calls
	// change with it, and stores the DisplayName, Department, Timezone and
	// Role change leaves, stamping UpdatedAt with at, all in one
	// transaction that concurrent writers wait for: change always edits
	// the user as stored, so no edit is lost. Other fields change sets are
	// ignored. It returns the user as stored afterwards. change's error is
	// returned as is, writing nothing; an unknown user gives ErrNotFound,
	// a role other than RoleAdmin and RoleMember an error, and demoting
	// the organisation's last enabled admin ErrLastAdmin, each writing
	// nothing. When change leaves the four fields as they were nothing is
	// written, UpdatedAt included. change runs inside the transaction: it
	// must be quick and must not call the store.
	ModifyUser(ctx context.Context, orgID, id string, at time.Time, change func(*User) error) (User, error)
	// DisableUser marks the user disabled at `at` and deletes every
	// credential they hold, in one transaction. An unknown user gives
	// ErrNotFound; the organisation's last enabled admin ErrLastAdmin,
	// writing nothing. Disabling a disabled user changes nothing.
	DisableUser(ctx context.Context, orgID, id string, at time.Time) error
	// EnableUser clears the user's DisabledAt and stamps UpdatedAt with
	// `at`, in one write. An unknown user gives ErrNotFound; enabling an
	// enabled user changes nothing, UpdatedAt included, and is no error.
	// The credentials DisableUser deleted stay deleted: the user signs in
	// again with a new login link.
	EnableUser(ctx context.Context, orgID, id string, at time.Time) error
	// PutCredential stores a credential; a Hash in use for that Kind gives
	// ErrExists, a user who is unknown or disabled ErrNotFound (checked in
	// the write's transaction).
	PutCredential(ctx context.Context, c Credential) error
	// LookupCredential returns the credential of that kind and hash that
	// has not expired at now, or ErrNotFound.
	LookupCredential(ctx context.Context, kind, hash string, now time.Time) (Credential, error)
	// ConsumeCredential returns the unexpired credential and deletes it,
	// atomically: of two concurrent calls exactly one succeeds, the other
	// gets ErrNotFound (one-time login links).
	ConsumeCredential(ctx context.Context, kind, hash string, now time.Time) (Credential, error)
	// DeleteCredential removes a credential; an unknown one gives
	// ErrNotFound.
	DeleteCredential(ctx context.Context, kind, hash string) error
	// ListCredentials returns a user's credentials of one kind, newest
	// first (hashes included; they are not secrets).
	ListCredentials(ctx context.Context, orgID, userID, kind string) ([]Credential, error)
	// DeleteExpiredCredentials removes every credential expired at now and
	// returns how many.
	DeleteExpiredCredentials(ctx context.Context, now time.Time) (int, error)
}

// StoredAgent is an agent definition saved in an organisation: the YAML an
// admin authored, validated before it is stored.
type StoredAgent struct {
	OrgID string
	// Name is unique per organisation.
	Name string
	// Definition is the agent file's YAML, as authored.
	Definition []byte
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Agents stores agent definitions.
type Agents interface {
	// PutAgent inserts the agent or replaces the definition stored under
	// its name (keeping CreatedAt, stamping UpdatedAt).
	PutAgent(ctx context.Context, a StoredAgent) error
	// GetAgent returns an agent or ErrNotFound.
	GetAgent(ctx context.Context, orgID, name string) (StoredAgent, error)
	// ListAgents returns the organisation's agents ordered by name.
	ListAgents(ctx context.Context, orgID string) ([]StoredAgent, error)
	// DeleteAgent removes an agent or returns ErrNotFound.
	DeleteAgent(ctx context.Context, orgID, name string) error
}

// ErrConflict reports a write based on a version that is no longer the
// stored one: someone saved in between.
var ErrConflict = errors.New("changed since it was read")

// OrgSettings are an organisation's settings as stored: a document whose
// shape belongs to the caller, and sealed secrets (API keys) kept apart so
// that key rotation can re-encrypt them without reading the document.
type OrgSettings struct {
	OrgID string
	// Doc is the settings document (JSON); nil when never saved.
	Doc []byte
	// Secrets are sealed values by name (secret.Keyring.Seal output bound
	// to the organisation and the name). Stores never see plaintext.
	Secrets map[string]string
	// Version counts saves, and key rotations that re-sealed the
	// organisation's secrets; 0 means never saved.
	Version   int64
	UpdatedAt time.Time
}

// Settings stores organisations' settings.
type Settings interface {
	// GetOrgSettings returns the organisation's settings; one that never
	// saved any gets {OrgID, Version: 0, Secrets: empty non-nil map} and
	// no error.
	GetOrgSettings(ctx context.Context, orgID string) (OrgSettings, error)
	// PutOrgSettings replaces the document and the whole set of secrets
	// (names absent from s.Secrets are deleted) when the stored version is
	// s.Version, storing version s.Version+1 and UpdatedAt = s.UpdatedAt,
	// in one transaction, and returns the new version. Another stored
	// version gives ErrConflict, writing nothing.
	PutOrgSettings(ctx context.Context, s OrgSettings) (int64, error)
	// CountOrgSecrets returns how many sealed secrets are stored, in every
	// organisation.
	CountOrgSecrets(ctx context.Context) (int, error)
	// RewrapOrgSecrets calls rewrap for every stored secret, in every
	// organisation, and stores what it returns when it differs, all in one
	// transaction: when rewrap fails for any secret nothing is written and
	// its error is returned. It returns how many changed. The version of
	// every organisation with a changed secret is bumped in the same
	// transaction (UpdatedAt is left alone), so a PutOrgSettings based on
	// a read from before the rotation, which would store secrets sealed
	// under the old key, gets ErrConflict.
	RewrapOrgSecrets(ctx context.Context, rewrap func(orgID, name, sealed string) (string, error)) (int, error)
}
