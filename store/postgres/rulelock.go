package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// ruleLock names a PostgreSQL advisory lock that stands for a rule
// spanning rows whose scope has no row of its own to lock: an
// organisation's MCP registrations need no orgs row, a conversation's
// open targets no conversations row. A writer that checks the rule and
// then writes takes the lock of the rule's scope first, so writers of one
// scope, in any process on the database, run their check-then-write one
// after another at READ COMMITTED.
//
// The locks are transaction-level (pg_advisory_xact_lock): released at
// commit or rollback, never left behind by a failed transaction, and
// usable behind a pooler in transaction mode. They are the two-key form
// (rule, hash of the scope), a key space apart from the one-key form
// migrateLockKey uses. Two scopes whose hashes collide share a lock:
// their writers wait for each other, which costs time and never breaks a
// rule.
type ruleLock int32

// The rules held by advisory locks.
const (
	// lockMCPServers is an organisation's MCP registrations: the slot
	// limit CreateMCPServer checks.
	lockMCPServers ruleLock = iota + 1
	// lockIntentTriggers is one target's custom triggers in an
	// organisation: the limit AddIntentTrigger checks.
	lockIntentTriggers
	// lockIntentTargets is a conversation's open targets: the positions
	// OpenIntentTargets hands out, in open order.
	lockIntentTargets
	// lockResultsUser and lockResultsConversation are a user's and a
	// conversation's stored result bodies: the quota PutResult keeps.
	lockResultsUser
	lockResultsConversation
)

// lockRule takes, in tx, the advisory lock of rule for the scope that
// scope names (an organisation, then narrower keys), waiting until the
// transaction holding it ends; the lock is released when tx does.
//
// It must be a statement of its own, before the statements that read
// what the rule counts: at READ COMMITTED each statement reads the data
// committed when it starts, so only a statement that starts after the
// lock is granted sees what the previous holder committed.
func lockRule(ctx context.Context, tx pgx.Tx, rule ruleLock, scope ...string) error {
	h := fnv.New32a()
	for _, part := range scope {
		h.Write([]byte(part))
		h.Write([]byte{0}) // "a","bc" is not "ab","c"
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, $2)", int32(rule), int32(h.Sum32())); err != nil {
		return fmt.Errorf("take the lock of rule %d: %w", rule, err)
	}
	return nil
}

// checkStorableText returns an error naming what when s is text that a
// PostgreSQL text column refuses: a NUL byte or invalid UTF-8. It is for
// values from outside (names a remote server reports), so that they get
// a clear error before any write rather than the server's encoding error.
func checkStorableText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s %q holds a NUL byte", what, s)
	}
	return nil
}
