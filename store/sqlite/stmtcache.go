package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
)

// maxCachedStmts bounds the statements one connection keeps prepared.
// The store's queries are constant strings, a couple of hundred in all;
// a query past the bound (a dynamically built one, say) is prepared for
// its call alone, as without the cache.
const maxCachedStmts = 512

// baseDriver is modernc.org/sqlite's driver, as sql.Open("sqlite") uses
// it (sql.Open connects to nothing).
var baseDriver = sync.OnceValue(func() driver.Driver {
	db, err := sql.Open("sqlite", "")
	if err != nil {
		panic("sqlite: the modernc.org/sqlite driver is not registered: " + err.Error())
	}
	defer db.Close()
	return db.Driver()
})

// cachingConnector opens connections that keep their prepared
// statements: the driver parses and plans a statement on every call
// otherwise, which profiles showed as about a sixth of a turn's CPU.
type cachingConnector struct{ dsn string }

// Connect implements driver.Connector.
func (c cachingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := baseDriver().Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return newCachingConn(conn)
}

// Driver implements driver.Connector.
func (c cachingConnector) Driver() driver.Driver { return baseDriver() }

// sqliteConn is what modernc.org/sqlite's connections implement and
// database/sql uses.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a connection with a cache of its prepared statements,
// by query text. database/sql uses a connection from one goroutine at a
// time, so the cache needs no lock. A cached statement whose rows are
// still open (a query issued again while the first one's rows are read,
// inside one transaction) is not shared: that call prepares its own.
type cachingConn struct {
	sqliteConn
	stmts map[string]*cachedStmt
}

// cachedStmt is a prepared statement and whether rows of it are open.
type cachedStmt struct {
	stmt interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
	busy bool
}

func newCachingConn(conn driver.Conn) (driver.Conn, error) {
	c, ok := conn.(sqliteConn)
	if !ok {
		return nil, errors.Join(errors.New("sqlite: the driver's connection lacks an interface database/sql uses"), conn.Close())
	}
	return &cachingConn{sqliteConn: c, stmts: map[string]*cachedStmt{}}, nil
}

// cached returns the query's statement, prepared on first use; nil (and
// no error) when it cannot be shared now or the cache is full.
func (c *cachingConn) cached(ctx context.Context, query string) (*cachedStmt, error) {
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		return cs, nil
	}
	if len(c.stmts) >= maxCachedStmts {
		return nil, nil
	}
	st, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s, ok := st.(interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	})
	if !ok {
		st.Close()
		return nil, nil
	}
	cs := &cachedStmt{stmt: s}
	c.stmts[query] = cs
	return cs, nil
}

// ExecContext implements driver.ExecerContext through the cache.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.cached(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	return cs.stmt.ExecContext(ctx, args)
}

// QueryContext implements driver.QueryerContext through the cache; the
// statement is busy until its rows are closed.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.cached(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &cachedRows{Rows: rows, cs: cs}, nil
}

// Close finalizes the cached statements and closes the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for q, cs := range c.stmts {
		errs = append(errs, cs.stmt.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.sqliteConn.Close())...)
}

// cachedRows frees its statement for the next call when closed.
type cachedRows struct {
	driver.Rows
	cs *cachedStmt
}

// Close implements driver.Rows.
func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.cs.busy = false
	return err
}
