// Package store defines Quiver's repositories and the records they hold,
// one file per repository: conversations, turns, messages, results, usage,
// MCP servers, intents, accounts (organisations, users, credentials),
// agents, settings, blobs, attachments, memories, the history search, the
// keyring check and erasing a user (UserErasure, across all of them). Implementations
// (store/sqlite, store/postgres) pass the shared conformance suite in
// store/storetest.
// All methods are safe for concurrent use and honour ctx cancellation.
//
// Text fields other than message content, result bodies and stored
// documents must be valid UTF-8 without NUL bytes: PostgreSQL's text type
// refuses the others (with an error, writing nothing), so strings from
// models, tools and people pass through PlainText where they enter.
//
// A consumer declares the repositories it uses (one of the interfaces
// here, or a small interface of its own composed of them), never Store.
//
// Runs and TurnEvents are what the replicas of `quiver serve` share about
// the turns they run: which replica holds a conversation's running turn,
// by lease, and each turn's event stream, resumable from any replica.
// RateLimits is their shared token buckets (the HTTP API's per-user
// limit).
package store

import "errors"

// Errors shared by every repository, returned wrapped; test with
// errors.Is. A repository's own sentinel errors sit beside it.
var (
	// ErrNotFound is returned when a record does not exist in the scope
	// it was asked for. It never says whether the record exists
	// elsewhere.
	ErrNotFound = errors.New("not found")
	// ErrExists reports a record whose key is already taken.
	ErrExists = errors.New("already exists")
	// ErrConflict reports a write based on a version that is no longer
	// the stored one: someone saved in between.
	ErrConflict = errors.New("changed since it was read")
)

// ErrNoStore is what a consumer given no repository answers, wrapped, when
// a call needs one: the command it runs in opened no store (quiver tools,
// prompt render and agent check build a catalog whose tools they never
// run). No repository returns it.
var ErrNoStore = errors.New("no store is open for this command")

// Store is every repository together, with the whole-store copy
// (Archiver, for export and import) and Close. Only the composition root
// (internal/app), which opens a store and hands each consumer the
// repositories it declares, takes it.
type Store interface {
	Conversations
	Turns
	TurnWriter
	Branches
	Messages
	MessageMarks
	Results
	Usages
	Budgets
	MCPServers
	Intents
	Accounts
	UserErasure
	Agents
	Settings
	Blobs
	Attachments
	Artifacts
	Memories
	ShortTerms
	Knowledge
	Skills
	Tasks
	Leases
	Blocks
	History
	KeyChecks
	Runs
	TurnEvents
	RateLimits
	Archiver
	// Close releases the store's resources.
	Close() error
}
