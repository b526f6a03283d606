package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// maxMCPTools is the most tool names SetMCPServerTools stores: the
// contract's bound, enforced here so that a misbehaving server cannot
// grow a row without limit.
const maxMCPTools = 100

// mcpColumns are the columns scanMCPServer reads, in its order.
const mcpColumns = `org_id, id, name, url, token, type, enabled, tools,
	created_at, updated_at, discovered_at`

// CreateMCPServer inserts srv, or writes nothing and returns, wrapped, the
// first rule it would break: store.ErrNameTaken, then store.ErrFamilyInUse,
// then store.ErrSlotsFull (limit <= 0 means no limit). Any type other than
// store.MCPGeneral is a typed family. An ID already stored in srv.OrgID is
// an error too.
func (s *Store) CreateMCPServer(ctx context.Context, srv store.MCPServer, limit int) error {
	tools, err := encodeOptionalTools(srv.Tools)
	if err != nil {
		return fmt.Errorf("sqlite: create mcp server: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkCreate(ctx, tx, srv, limit); err != nil {
			return err
		}
		const q = `INSERT INTO mcp_servers (` + mcpColumns + `)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
		_, err := tx.ExecContext(ctx, q, srv.OrgID, srv.ID, srv.Name, srv.URL,
			srv.Token, srv.Type, srv.Enabled, tools, encodeTime(srv.CreatedAt),
			encodeTime(srv.UpdatedAt), encodeOptionalTime(srv.DiscoveredAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create mcp server: %w", err)
	}
	return nil
}

// checkCreate returns the sentinel error of the first rule srv would break
// in its organisation, or nil.
func checkCreate(ctx context.Context, tx *sql.Tx, srv store.MCPServer, limit int) error {
	const q = `SELECT
			EXISTS (SELECT 1 FROM mcp_servers WHERE org_id = ?1 AND name = ?2),
			(SELECT count(*) FROM mcp_servers WHERE org_id = ?1)`
	var taken bool
	var n int
	if err := tx.QueryRowContext(ctx, q, srv.OrgID, srv.Name).Scan(&taken, &n); err != nil {
		return err
	}
	if taken {
		return store.ErrNameTaken
	}
	if srv.Enabled {
		if err := checkFamilyFree(ctx, tx, srv.OrgID, srv.Type, srv.ID); err != nil {
			return err
		}
	}
	if limit > 0 && n >= limit {
		return store.ErrSlotsFull
	}
	return nil
}

// checkFamilyFree returns store.ErrFamilyInUse when typ is a typed family
// and a server of orgID other than id is enabled with it.
func checkFamilyFree(ctx context.Context, tx *sql.Tx, orgID, typ, id string) error {
	if typ == store.MCPGeneral {
		return nil
	}
	const q = `SELECT EXISTS (SELECT 1 FROM mcp_servers
		WHERE org_id = ? AND type = ? AND enabled AND id <> ?)`
	var inUse bool
	if err := tx.QueryRowContext(ctx, q, orgID, typ, id).Scan(&inUse); err != nil {
		return err
	}
	if inUse {
		return store.ErrFamilyInUse
	}
	return nil
}

// GetMCPServer returns the server with that name in that organisation, or
// an error wrapping store.ErrNotFound when there is none there.
func (s *Store) GetMCPServer(ctx context.Context, orgID, name string) (store.MCPServer, error) {
	const q = `SELECT ` + mcpColumns + ` FROM mcp_servers WHERE org_id = ? AND name = ?`
	srv, err := scanMCPServer(s.reader.QueryRowContext(ctx, q, orgID, name))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.MCPServer{}, fmt.Errorf("sqlite: get mcp server: %w", err)
	}
	return srv, nil
}

// ListMCPServers returns the organisation's servers ordered by name, byte
// by byte; none and no error for an organisation without servers.
func (s *Store) ListMCPServers(ctx context.Context, orgID string) ([]store.MCPServer, error) {
	const q = `SELECT ` + mcpColumns + ` FROM mcp_servers WHERE org_id = ?
		ORDER BY name`
	srvs, err := s.listMCPServers(ctx, q, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list mcp servers: %w", err)
	}
	return srvs, nil
}

// ListEnabledMCPServers returns the organisation's enabled servers ordered
// by name, byte by byte.
func (s *Store) ListEnabledMCPServers(ctx context.Context, orgID string) ([]store.MCPServer, error) {
	const q = `SELECT ` + mcpColumns + ` FROM mcp_servers WHERE org_id = ? AND enabled
		ORDER BY name`
	srvs, err := s.listMCPServers(ctx, q, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list enabled mcp servers: %w", err)
	}
	return srvs, nil
}

// listMCPServers runs q, a select of mcpColumns, on the readers.
func (s *Store) listMCPServers(ctx context.Context, q string, args ...any) ([]store.MCPServer, error) {
	rows, err := s.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanMCPServers(rows)
}

// SetMCPServerEnabled enables or disables the server with that name and
// stamps UpdatedAt with at, even when Enabled was already so. Enabling a
// typed server while another of its family is enabled fails with
// store.ErrFamilyInUse; an unknown name with store.ErrNotFound. Both write
// nothing.
func (s *Store) SetMCPServerEnabled(ctx context.Context, orgID, name string, enabled bool, at time.Time) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		const get = `SELECT id, type FROM mcp_servers WHERE org_id = ? AND name = ?`
		var id, typ string
		err := tx.QueryRowContext(ctx, get, orgID, name).Scan(&id, &typ)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if enabled {
			if err := checkFamilyFree(ctx, tx, orgID, typ, id); err != nil {
				return err
			}
		}
		const set = `UPDATE mcp_servers SET enabled = ?, updated_at = ?
			WHERE org_id = ? AND id = ?`
		_, err = tx.ExecContext(ctx, set, enabled, encodeTime(at), orgID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: set mcp server enabled: %w", err)
	}
	return nil
}

// DeleteMCPServer removes the server with that name, freeing its name and
// its slot, or returns an error wrapping store.ErrNotFound.
func (s *Store) DeleteMCPServer(ctx context.Context, orgID, name string) error {
	const q = `DELETE FROM mcp_servers WHERE org_id = ? AND name = ?`
	res, err := s.writer.ExecContext(ctx, q, orgID, name)
	if err != nil {
		return fmt.Errorf("sqlite: delete mcp server: %w", err)
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete mcp server: %w", err)
	}
	return nil
}

// SetMCPServerTools stores tools and DiscoveredAt = at on the server with
// that ID, unless it already holds the same names in the same order: then
// it writes nothing, DiscoveredAt included, and reports changed=false. A
// server that is not there (deleted meanwhile) is changed=false and no
// error. UpdatedAt is left alone: a discovery is not an edit. A nil tools
// or one of more than 100 names is an error.
func (s *Store) SetMCPServerTools(ctx context.Context, orgID, id string, tools []string, at time.Time) (bool, error) {
	if tools == nil {
		return false, errors.New("sqlite: set mcp server tools: nil tools (a discovery that found none is an empty slice)")
	}
	if len(tools) > maxMCPTools {
		return false, fmt.Errorf("sqlite: set mcp server tools: %d tools, at most %d", len(tools), maxMCPTools)
	}
	encoded, err := encodeOptionalTools(tools)
	if err != nil {
		return false, fmt.Errorf("sqlite: set mcp server tools: %w", err)
	}
	// Comparing encoded text is comparing lists: the encoding is
	// deterministic and only this package writes the column. NULL (never
	// discovered) IS NOT any list.
	const q = `UPDATE mcp_servers SET tools = ?3, discovered_at = ?4
		WHERE org_id = ?1 AND id = ?2 AND tools IS NOT ?3`
	res, err := s.writer.ExecContext(ctx, q, orgID, id, encoded, encodeOptionalTime(at))
	if err != nil {
		return false, fmt.Errorf("sqlite: set mcp server tools: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: set mcp server tools: %w", err)
	}
	return n > 0, nil
}

// CountMCPTokens returns how many servers, in every organisation, hold a
// sealed token.
func (s *Store) CountMCPTokens(ctx context.Context) (int, error) {
	const q = `SELECT count(*) FROM mcp_servers WHERE token <> ''`
	var n int
	if err := s.reader.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count mcp tokens: %w", err)
	}
	return n, nil
}

// RewrapMCPTokens calls rewrap for every server holding a token, in every
// organisation, ordered by organisation and ID, and stores each token it
// returns that differs, all in one transaction that holds the write lock
// throughout. When rewrap fails nothing is written and its error is
// returned wrapped. UpdatedAt is left alone: re-sealing under a new key is
// not an edit anyone made. It returns how many tokens changed.
func (s *Store) RewrapMCPTokens(ctx context.Context, rewrap func(store.MCPServer) (string, error)) (int, error) {
	var changed int
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		const q = `SELECT ` + mcpColumns + ` FROM mcp_servers WHERE token <> ''
			ORDER BY org_id, id`
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		srvs, err := scanMCPServers(rows) // all read before the first write
		rows.Close()
		if err != nil {
			return err
		}
		changed, err = rewrapTokens(ctx, tx, srvs, rewrap)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: rewrap mcp tokens: %w", err)
	}
	return changed, nil
}

// rewrapTokens stores rewrap's answer for each of srvs where it differs
// and returns how many it stored.
func rewrapTokens(ctx context.Context, tx *sql.Tx, srvs []store.MCPServer, rewrap func(store.MCPServer) (string, error)) (int, error) {
	const q = `UPDATE mcp_servers SET token = ? WHERE org_id = ? AND id = ?`
	changed := 0
	for _, srv := range srvs {
		token, err := rewrap(srv)
		if err != nil {
			return 0, fmt.Errorf("server %s in %s: %w", srv.ID, srv.OrgID, err)
		}
		if token == srv.Token {
			continue
		}
		if _, err := tx.ExecContext(ctx, q, token, srv.OrgID, srv.ID); err != nil {
			return 0, err
		}
		changed++
	}
	return changed, nil
}

// scanMCPServers reads every row of a select of mcpColumns.
func scanMCPServers(rows *sql.Rows) ([]store.MCPServer, error) {
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

// scanMCPServer reads one row of mcpColumns.
func scanMCPServer(row scanner) (store.MCPServer, error) {
	var srv store.MCPServer
	var tools, discoveredAt sql.NullString
	var createdAt, updatedAt string
	err := row.Scan(&srv.OrgID, &srv.ID, &srv.Name, &srv.URL, &srv.Token, &srv.Type,
		&srv.Enabled, &tools, &createdAt, &updatedAt, &discoveredAt)
	if err != nil {
		return store.MCPServer{}, err
	}
	if srv.Tools, err = decodeOptionalTools(tools); err != nil {
		return store.MCPServer{}, err
	}
	if srv.CreatedAt, err = decodeTime(createdAt); err != nil {
		return store.MCPServer{}, err
	}
	if srv.UpdatedAt, err = decodeTime(updatedAt); err != nil {
		return store.MCPServer{}, err
	}
	if srv.DiscoveredAt, err = decodeOptionalTime(discoveredAt); err != nil {
		return store.MCPServer{}, err
	}
	return srv, nil
}
