package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// MCP servers. The rules that span rows are held, under concurrent
// writers in any number of processes, as follows:
//
//   - a name is unique in an organisation: the unique key
//     mcp_servers_name_key is the referee;
//   - one enabled server per typed family: the partial unique index
//     mcp_servers_one_enabled_per_type is the referee, so enabling (a
//     single UPDATE) needs no lock at all;
//   - the slot limit: CreateMCPServer counts and inserts under the
//     organisation's advisory lock (lockMCPServers), the only writer that
//     adds a server.
//
// CreateMCPServer also checks the first two itself, under that lock, so
// that it answers the first rule broken in the contract's order; their
// constraints still decide a race with a writer that takes no lock.

// maxMCPTools is the most tool names SetMCPServerTools stores: the
// contract's bound, enforced here so that a misbehaving server cannot
// grow a row without limit.
const maxMCPTools = 100

// The constraints of mcp_servers that have a sentinel error of their own.
const (
	mcpNameKey     = "mcp_servers_name_key"
	mcpFamilyIndex = "mcp_servers_one_enabled_per_type"
)

// mcpColumns are the columns scanMCPServer reads, in its order.
const mcpColumns = `org_id, id, name, url, token, type, enabled, tools,
	created_at, updated_at, discovered_at`

// CreateMCPServer inserts srv, or writes nothing and returns, wrapped, the
// first rule it would break: store.ErrNameTaken, then store.ErrFamilyInUse,
// then store.ErrSlotsFull (limit <= 0 means no limit). Any type other than
// store.MCPGeneral is a typed family. An ID already stored in srv.OrgID is
// an error wrapping store.ErrExists; a tool name that is not valid UTF-8
// or holds a NUL byte, an error.
func (s *Store) CreateMCPServer(ctx context.Context, srv store.MCPServer, limit int) error {
	if err := checkToolNames(srv.Tools); err != nil {
		return fmt.Errorf("postgres: create mcp server: %w", err)
	}
	// READ COMMITTED under the organisation's lock: the count read after
	// the lock is granted includes every server a previous holder
	// committed, and no other writer adds one until this commits, so
	// concurrent creates fill exactly the free slots.
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := lockRule(ctx, tx, lockMCPServers, srv.OrgID); err != nil {
			return err
		}
		if err := checkCreate(ctx, tx, srv, limit); err != nil {
			return err
		}
		const q = `INSERT INTO mcp_servers (` + mcpColumns + `)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
		_, err := tx.Exec(ctx, q, srv.OrgID, srv.ID, srv.Name, srv.URL, srv.Token,
			srv.Type, srv.Enabled, srv.Tools, srv.CreatedAt, srv.UpdatedAt,
			optionalTime(srv.DiscoveredAt))
		return err
	})
	if err != nil {
		return mcpErr("create mcp server", err)
	}
	return nil
}

// checkCreate returns the sentinel error of the first rule srv would break
// in its organisation, or nil.
func checkCreate(ctx context.Context, tx pgx.Tx, srv store.MCPServer, limit int) error {
	const q = `SELECT
			EXISTS (SELECT 1 FROM mcp_servers WHERE org_id = $1 AND name = $2),
			$3 AND $4 <> '` + store.MCPGeneral + `' AND EXISTS (SELECT 1 FROM mcp_servers
				WHERE org_id = $1 AND type = $4 AND enabled),
			(SELECT count(*) FROM mcp_servers WHERE org_id = $1)`
	var taken, inUse bool
	var n int
	if err := tx.QueryRow(ctx, q, srv.OrgID, srv.Name, srv.Enabled, srv.Type).Scan(&taken, &inUse, &n); err != nil {
		return err
	}
	switch {
	case taken:
		return store.ErrNameTaken
	case inUse:
		return store.ErrFamilyInUse
	case limit > 0 && n >= limit:
		return store.ErrSlotsFull
	}
	return nil
}

// mcpErr wraps err for op, mapping a violation of the name key or of the
// one-enabled-per-family index onto its sentinel error.
func mcpErr(op string, err error) error {
	switch {
	case isUniqueViolation(err, mcpNameKey):
		return fmt.Errorf("postgres: %s: %w", op, store.ErrNameTaken)
	case isUniqueViolation(err, mcpFamilyIndex):
		return fmt.Errorf("postgres: %s: %w", op, store.ErrFamilyInUse)
	}
	return wrapErr(op, err)
}

// GetMCPServer returns the server with that name in that organisation, or
// an error wrapping store.ErrNotFound when there is none there.
func (s *Store) GetMCPServer(ctx context.Context, orgID, name string) (store.MCPServer, error) {
	const q = `SELECT ` + mcpColumns + ` FROM mcp_servers WHERE org_id = $1 AND name = $2`
	srv, err := scanMCPServer(s.pool.QueryRow(ctx, q, orgID, name))
	if err != nil {
		return store.MCPServer{}, wrapErr("get mcp server", err)
	}
	return srv, nil
}

// ListMCPServers returns the organisation's servers ordered by name, byte
// by byte; none and no error for an organisation without servers.
func (s *Store) ListMCPServers(ctx context.Context, orgID string) ([]store.MCPServer, error) {
	const q = `SELECT ` + mcpColumns + ` FROM mcp_servers WHERE org_id = $1 ORDER BY name`
	srvs, err := queryMCPServers(ctx, s.pool, q, orgID)
	if err != nil {
		return nil, wrapErr("list mcp servers", err)
	}
	return srvs, nil
}

// ListEnabledMCPServers returns the organisation's enabled servers ordered
// by name, byte by byte.
func (s *Store) ListEnabledMCPServers(ctx context.Context, orgID string) ([]store.MCPServer, error) {
	const q = `SELECT ` + mcpColumns + ` FROM mcp_servers WHERE org_id = $1 AND enabled
		ORDER BY name`
	srvs, err := queryMCPServers(ctx, s.pool, q, orgID)
	if err != nil {
		return nil, wrapErr("list enabled mcp servers", err)
	}
	return srvs, nil
}

// queryMCPServers runs q, a select of mcpColumns, on db and reads every
// row.
func queryMCPServers(ctx context.Context, db querier, q string, args ...any) ([]store.MCPServer, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var srvs []store.MCPServer
	for rows.Next() {
		srv, err := scanMCPServer(rows)
		if err != nil {
			return nil, err
		}
		srvs = append(srvs, srv)
	}
	return srvs, rows.Err()
}

// SetMCPServerEnabled enables or disables the server with that name and
// stamps UpdatedAt with at, even when Enabled was already so. Enabling a
// typed server while another of its family is enabled fails with
// store.ErrFamilyInUse; an unknown name with store.ErrNotFound. Both write
// nothing.
func (s *Store) SetMCPServerEnabled(ctx context.Context, orgID, name string, enabled bool, at time.Time) error {
	// One statement, refereed by mcp_servers_one_enabled_per_type: of two
	// concurrent enables in one family the second waits for the first at
	// the index and fails with a unique violation once it commits. The
	// slot count does not change, so no lock is needed.
	const q = `UPDATE mcp_servers SET enabled = $3, updated_at = $4
		WHERE org_id = $1 AND name = $2`
	tag, err := s.pool.Exec(ctx, q, orgID, name, enabled, at)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return mcpErr("set mcp server enabled", err)
	}
	return nil
}

// DeleteMCPServer removes the server with that name, freeing its name and
// its slot, or returns an error wrapping store.ErrNotFound.
func (s *Store) DeleteMCPServer(ctx context.Context, orgID, name string) error {
	const q = `DELETE FROM mcp_servers WHERE org_id = $1 AND name = $2`
	tag, err := s.pool.Exec(ctx, q, orgID, name)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return wrapErr("delete mcp server", err)
	}
	return nil
}

// SetMCPServerTools stores tools and DiscoveredAt = at on the server with
// that ID, unless it already holds the same names in the same order: then
// it writes nothing, DiscoveredAt included, and reports changed=false. A
// server that is not there (deleted meanwhile) is changed=false and no
// error. UpdatedAt is left alone: a discovery is not an edit. A nil tools,
// one of more than 100 names, or a name PostgreSQL text cannot hold (a
// NUL byte, invalid UTF-8) is an error and writes nothing.
func (s *Store) SetMCPServerTools(ctx context.Context, orgID, id string, tools []string, at time.Time) (bool, error) {
	if tools == nil {
		return false, errors.New("postgres: set mcp server tools: nil tools (a discovery that found none is an empty slice)")
	}
	if len(tools) > maxMCPTools {
		return false, fmt.Errorf("postgres: set mcp server tools: %d tools, at most %d", len(tools), maxMCPTools)
	}
	if err := checkToolNames(tools); err != nil {
		return false, fmt.Errorf("postgres: set mcp server tools: %w", err)
	}
	// One statement: the comparison and the write see the same row. Arrays
	// are equal when their elements are, in order; NULL (never discovered)
	// is distinct from every list, the empty one included.
	const q = `UPDATE mcp_servers SET tools = $3, discovered_at = $4
		WHERE org_id = $1 AND id = $2 AND tools IS DISTINCT FROM $3::text[]`
	tag, err := s.pool.Exec(ctx, q, orgID, id, tools, at)
	if err != nil {
		return false, wrapErr("set mcp server tools", err)
	}
	return tag.RowsAffected() > 0, nil
}

// checkToolNames returns an error for the first of tools a text column
// cannot hold.
func checkToolNames(tools []string) error {
	for _, name := range tools {
		if err := checkStorableText("tool name", name); err != nil {
			return err
		}
	}
	return nil
}

// CountMCPTokens returns how many servers, in every organisation, hold a
// sealed token.
func (s *Store) CountMCPTokens(ctx context.Context) (int, error) {
	const q = `SELECT count(*) FROM mcp_servers WHERE token <> ''`
	var n int
	if err := s.pool.QueryRow(ctx, q).Scan(&n); err != nil {
		return 0, wrapErr("count mcp tokens", err)
	}
	return n, nil
}

// RewrapMCPTokens calls rewrap for every server holding a token, in every
// organisation, ordered by organisation and ID, and stores each token it
// returns that differs, all in one transaction. When rewrap fails nothing
// is written and its error is returned wrapped. UpdatedAt is left alone:
// re-sealing under a new key is not an edit anyone made. It returns how
// many tokens changed.
func (s *Store) RewrapMCPTokens(ctx context.Context, rewrap func(store.MCPServer) (string, error)) (int, error) {
	var changed int
	// READ COMMITTED with the rows locked (FOR UPDATE, in key order) from
	// the read to the commit: no other writer changes a token meanwhile,
	// and a second rotation running at once waits, then reads the tokens
	// this one stored. A server created meanwhile is not rewrapped: it
	// was sealed by a writer that did not see this rotation commit.
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		const q = `SELECT ` + mcpColumns + ` FROM mcp_servers WHERE token <> ''
			ORDER BY org_id, id FOR UPDATE`
		srvs, err := queryMCPServers(ctx, tx, q)
		if err != nil {
			return err
		}
		changed, err = rewrapTokens(ctx, tx, srvs, rewrap)
		return err
	})
	if err != nil {
		return 0, wrapErr("rewrap mcp tokens", err)
	}
	return changed, nil
}

// rewrapTokens stores rewrap's answer for each of srvs where it differs,
// in one statement, and returns how many it stored.
func rewrapTokens(ctx context.Context, tx pgx.Tx, srvs []store.MCPServer, rewrap func(store.MCPServer) (string, error)) (int, error) {
	var orgs, ids, tokens []string
	for _, srv := range srvs {
		token, err := rewrap(srv)
		if err != nil {
			return 0, fmt.Errorf("server %s in %s: %w", srv.ID, srv.OrgID, err)
		}
		if token != srv.Token {
			orgs, ids, tokens = append(orgs, srv.OrgID), append(ids, srv.ID), append(tokens, token)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	const q = `UPDATE mcp_servers AS m SET token = u.token
		FROM unnest($1::text[], $2::text[], $3::text[]) AS u (org_id, id, token)
		WHERE m.org_id = u.org_id AND m.id = u.id`
	if _, err := tx.Exec(ctx, q, orgs, ids, tokens); err != nil {
		return 0, err
	}
	return len(ids), nil
}

// scanMCPServer reads one row of mcpColumns: a NULL tools is nil (never
// discovered), '{}' an empty non-nil slice (none discovered).
func scanMCPServer(row pgx.Row) (store.MCPServer, error) {
	var srv store.MCPServer
	var discoveredAt *time.Time
	err := row.Scan(&srv.OrgID, &srv.ID, &srv.Name, &srv.URL, &srv.Token, &srv.Type,
		&srv.Enabled, &srv.Tools, &srv.CreatedAt, &srv.UpdatedAt, &discoveredAt)
	if err != nil {
		return store.MCPServer{}, err
	}
	srv.CreatedAt, srv.UpdatedAt = utc(srv.CreatedAt), utc(srv.UpdatedAt)
	srv.DiscoveredAt = fromOptionalTime(discoveredAt)
	return srv, nil
}
