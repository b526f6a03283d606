// Package sqlite is Quiver's embedded store: one SQLite database file,
// quiver.db, in a data directory, through the pure-Go modernc.org/sqlite
// driver, so the binary needs no C toolchain.
//
// The database runs in WAL mode. Writes go through a single connection, so
// concurrent writers in this process queue in Go instead of racing for
// SQLite's write lock and failing with SQLITE_BUSY; WAL lets a separate pool
// of read-only connections read while that connection writes. Another
// process writing the same file is waited for up to a busy timeout.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/internal/eventwait"
)

// FileName is the name of the database file inside the data directory.
const FileName = "quiver.db"

// busyTimeoutMillis is how long a connection waits for a lock held by
// another connection (a reader checkpointing, another process) before it
// reports SQLITE_BUSY.
const busyTimeoutMillis = 5000

// Store is the SQLite implementation of store.Store. It is safe for
// concurrent use; Close it when done.
type Store struct {
	// writer has exactly one connection: every write is serialised on it.
	writer *sql.DB
	// reader is a pool of query_only connections for reads.
	reader *sql.DB
	// waiters are this process's WaitTurnEvents calls, woken after an
	// append commits.
	waiters eventwait.Hub
	// vectors keeps memory vectors between searches (MemoryVectors).
	vectors *store.VectorCache
}

var _ store.Store = (*Store)(nil)

// Open opens the database dir/quiver.db, creating dir (mode 0700) and the
// file when they are missing, and applies any migration the database lacks
// before it returns. Opening an up-to-date database changes nothing. ctx
// bounds the opening and the migrations, not the Store's lifetime.
func Open(ctx context.Context, dir string) (*Store, error) {
	path, err := prepareDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	s, err := openPools(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	return s, nil
}

// prepareDir creates dir when missing and returns the database file's
// absolute path.
func prepareDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("empty data directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.Abs(filepath.Join(dir, FileName))
}

// openPools opens the writer, migrates, then opens the readers: readers
// start only once the schema is in place.
func openPools(ctx context.Context, path string) (*Store, error) {
	writer, err := openDB(ctx, writerDSN(path), 1)
	if err != nil {
		return nil, err
	}
	if err := checkWAL(ctx, writer); err != nil {
		return nil, errors.Join(err, writer.Close())
	}
	if _, err := migrate(ctx, writer, migrationFiles); err != nil {
		return nil, errors.Join(err, writer.Close())
	}
	reader, err := openDB(ctx, readerDSN(path), max(2, runtime.GOMAXPROCS(0)))
	if err != nil {
		return nil, errors.Join(err, writer.Close())
	}
	return &Store{writer: writer, reader: reader, vectors: store.NewVectorCache(0)}, nil
}

// openDB opens a pool of at most conns connections and checks that one
// can be made.
func openDB(ctx context.Context, dsn string, conns int) (*sql.DB, error) {
	db := sql.OpenDB(cachingConnector{dsn: dsn})
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	// Keep connections: each one costs an open and its pragmas.
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

// writerDSN configures the writing connection. _txlock=immediate makes
// every transaction take the write lock at BEGIN, so one that reads first
// cannot fail later on upgrading its lock.
func writerDSN(path string) string {
	return dsn(path, url.Values{
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		"_txlock":       {"immediate"},
	})
}

// readerDSN configures a reading connection; query_only turns any write
// through it into an error instead of a second writer.
func readerDSN(path string) string {
	return dsn(path, url.Values{"_query_only": {"on"}})
}

// dsn builds a file: URI for path with the pragmas every connection needs
// plus extra. The path is escaped, so '?', '#' and '%' in it are safe.
func dsn(path string, extra url.Values) string {
	q := url.Values{
		"_busy_timeout": {fmt.Sprint(busyTimeoutMillis)},
		"_foreign_keys": {"on"},
	}
	for k, v := range extra {
		q[k] = v
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path // a Windows drive path: file:///C:/...
	}
	return u.String()
}

// checkWAL fails when the file system refused WAL mode, which SQLite does
// silently (network file systems): without it readers block the writer.
func checkWAL(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	return nil
}

// inWriteTx runs fn in a transaction on the writer and commits when fn
// returns nil; otherwise nothing fn wrote is kept. With one writer
// connection and _txlock=immediate the transaction holds SQLite's write
// lock from BEGIN, so a rule fn reads before it writes (a unique name, a
// limit) cannot be raced by another writer, here or in another process.
// It waits for the writer at most store.WriteWait(ctx) (beginWrite).
func (s *Store) inWriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, done, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := fn(tx); err != nil {
		return busy(err)
	}
	return busy(tx.Commit())
}

// beginWrite begins a transaction on the writer connection and returns
// it with the function that rolls it back (a no-op after Commit) and
// hands the connection back; call that once the transaction is over.
// Writers queue in this process for the one connection (database/sql
// serves them in no set order), so the wait for it is bounded: past
// store.WriteWait(ctx), with ctx itself still live, the write fails with
// store.ErrBusy having written nothing, and an overloaded server answers
// "busy" instead of queueing without end. SQLITE_BUSY (a lock another
// process held past the busy timeout) is store.ErrBusy too.
func (s *Store) beginWrite(ctx context.Context) (*sql.Tx, func(), error) {
	wait := store.WriteWait(ctx)
	wctx, cancel := context.WithTimeout(ctx, wait)
	conn, err := s.writer.Conn(wctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, nil, fmt.Errorf("%w: the database's writer stayed taken for %v", store.ErrBusy, wait)
		}
		return nil, nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, errors.Join(busy(err), conn.Close())
	}
	return tx, func() {
		tx.Rollback() //nolint:errcheck // a no-op after Commit
		conn.Close()  //nolint:errcheck // hands the connection back to the pool
	}, nil
}

// busy is err, marked store.ErrBusy when SQLite reported SQLITE_BUSY or
// SQLITE_LOCKED (primary codes 5 and 6, whatever the extended code).
func busy(err error) error {
	var coded interface{ Code() int }
	if err == nil || errors.Is(err, store.ErrBusy) || !errors.As(err, &coded) {
		return err
	}
	if c := coded.Code() & 0xff; c == 5 || c == 6 {
		return fmt.Errorf("%w: %w", store.ErrBusy, err)
	}
	return err
}

// Close closes every connection. The Store must not be used afterwards.
func (s *Store) Close() error {
	// The writer closes last: the last connection to close checkpoints
	// the WAL into the database file.
	err := errors.Join(s.reader.Close(), s.writer.Close())
	s.waiters.RecheckAll() // their reads now fail: no waiter outlives the store
	if err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}
