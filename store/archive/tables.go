package archive

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/store"
)

// tableReader is an archive's tables as a store.TableReader: the entries
// after the manifest named tables/<table>.jsonl, each a table of
// store.ArchiveTables in that order, each line a row that decodeRow
// accepts, each table holding the rows the manifest counts. It stops at
// the first entry that is not a table (kept in pending) or at the end.
type tableReader struct {
	a      *archiveFile
	m      Manifest
	tables []store.ArchiveTable
	// next is the index in tables that the next table may not precede.
	next int
	seen map[string]bool
	// cur, sc and rows are the table being read (sc nil between tables).
	cur  store.ArchiveTable
	sc   *bufio.Scanner
	rows int64
	// pending is the entry after the tables; nil when there is none.
	pending *tar.Header
	ended   bool
	// keyCheck is the deployment's keyring_check value, once read.
	keyCheck string
	// unique, for a table whose rows may repeat a key the current schema
	// enforces (store.ArchiveUnique), holds the keys of the rows read so
	// far, hashed; nil for other tables.
	unique map[[32]byte]struct{}
	// dropped counts the rows left out as repeats, by table.
	dropped map[string]int64
	// memories counts the memories table's rows by organisation and
	// owner, so that an import never takes an owner past
	// store.MaxMemoriesPerOwner (which PutMemory would refuse).
	memories map[[2]string]int64
}

// newTableReader reads the tables of a, whose manifest m was just read.
func newTableReader(a *archiveFile, m Manifest) *tableReader {
	return &tableReader{a: a, m: m, tables: store.ArchiveTables(), seen: map[string]bool{}}
}

// NextTable returns the next table, or io.EOF after the last one, once
// every table the manifest counts rows in has been read. The rows of the
// table before that were not read are read (and checked) first.
func (r *tableReader) NextTable() (store.ArchiveTable, error) {
	for r.sc != nil {
		if _, err := r.NextRow(); err != nil && !errors.Is(err, io.EOF) {
			return store.ArchiveTable{}, err
		}
	}
	if r.ended {
		return store.ArchiveTable{}, io.EOF
	}
	h, err := r.a.next()
	if err != nil && !errors.Is(err, io.EOF) {
		return store.ArchiveTable{}, err
	}
	if errors.Is(err, io.EOF) || !strings.HasPrefix(h.Name, tablesDir) {
		r.pending, r.ended = h, true
		return store.ArchiveTable{}, r.checkAllRead()
	}
	t, err := r.table(h)
	if err != nil {
		return store.ArchiveTable{}, err
	}
	r.cur, r.rows, r.seen[t.Name] = t, 0, true
	r.unique = nil
	if t.Unique.Applies(r.m.Backend, r.m.Schema[r.m.Backend]) {
		r.unique = map[[32]byte]struct{}{}
	}
	r.sc = bufio.NewScanner(r.a.tr)
	r.sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes+1) // the line and its newline
	return t, nil
}

// table is the table entry h names, which must come after the tables
// read so far.
func (r *tableReader) table(h *tar.Header) (store.ArchiveTable, error) {
	name, ok := strings.CutSuffix(strings.TrimPrefix(h.Name, tablesDir), tableExt)
	if !ok || h.Typeflag != tar.TypeReg {
		return store.ArchiveTable{}, fmt.Errorf("entry %q: not a table file", h.Name)
	}
	i := slices.IndexFunc(r.tables, func(t store.ArchiveTable) bool { return t.Name == name })
	switch {
	case i < 0:
		return store.ArchiveTable{}, fmt.Errorf("entry %q: unknown table %q", h.Name, name)
	case i < r.next:
		return store.ArchiveTable{}, fmt.Errorf("entry %q: table %s out of order or repeated", h.Name, name)
	}
	r.next = i + 1
	return r.tables[i], nil
}

// checkAllRead requires every table the manifest counts rows in to have
// been read, and returns io.EOF.
func (r *tableReader) checkAllRead() error {
	for _, t := range r.tables {
		if r.m.Tables[t.Name] > 0 && !r.seen[t.Name] {
			return fmt.Errorf("table %s: missing, the manifest counts %d rows: the archive is truncated or altered", t.Name, r.m.Tables[t.Name])
		}
	}
	return io.EOF
}

// NextRow returns the current table's next row, or io.EOF after its last
// once the rows read are as many as the manifest counts. A row repeating
// the key of an earlier one, in a table whose rows may (see unique), is
// left out and counted in dropped.
func (r *tableReader) NextRow() ([]any, error) {
	for {
		row, err := r.nextRow()
		if err != nil || !r.repeats(row) {
			return row, err
		}
		if r.dropped == nil {
			r.dropped = map[string]int64{}
		}
		r.dropped[r.cur.Name]++
	}
}

// repeats reports whether row repeats the unique key of a row read
// before it in the current table, remembering its key when not.
func (r *tableReader) repeats(row []any) bool {
	if r.unique == nil {
		return false
	}
	h := sha256.New()
	for _, name := range r.cur.Unique.Columns {
		// Each value's type and length go first, so that no two keys
		// hash the same bytes.
		v := r.cur.Value(row, name)
		text := fmt.Sprint(v)
		fmt.Fprintf(h, "%T:%d:%s;", v, len(text), text)
	}
	var k [32]byte
	h.Sum(k[:0])
	if _, ok := r.unique[k]; ok {
		return true
	}
	r.unique[k] = struct{}{}
	return false
}

// nextRow reads the current table's next row: see NextRow.
func (r *tableReader) nextRow() ([]any, error) {
	if r.sc == nil {
		return nil, io.EOF
	}
	want := r.m.Tables[r.cur.Name]
	if !r.sc.Scan() {
		err := r.sc.Err()
		r.sc = nil
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			return nil, fmt.Errorf("table %s: a line over %d bytes", r.cur.Name, MaxLineBytes)
		case err != nil:
			return nil, fmt.Errorf("table %s: %w", r.cur.Name, err)
		case r.rows != want:
			return nil, fmt.Errorf("table %s: %d rows, the manifest counts %d: the archive is truncated or altered", r.cur.Name, r.rows, want)
		}
		return nil, io.EOF
	}
	if r.rows++; r.rows > want {
		return nil, fmt.Errorf("table %s: more rows than the %d the manifest counts", r.cur.Name, want)
	}
	row, err := decodeRow(r.cur, r.sc.Bytes())
	if err != nil {
		return nil, fmt.Errorf("row %d: %w", r.rows, err)
	}
	if r.cur.Name == "deployment" && row[0] == store.KeyCheckName {
		r.keyCheck = row[1].(string)
	}
	if r.cur.Name == "memories" {
		if err := r.countMemory(row); err != nil {
			return nil, fmt.Errorf("row %d: %w", r.rows, err)
		}
	}
	return row, nil
}

// countMemory counts a memories row against its owner's cap: one over
// store.MaxMemoriesPerOwner is an error wrapping store.ErrMemoryQuota.
func (r *tableReader) countMemory(row []any) error {
	org, _ := r.cur.Value(row, "org_id").(string)
	owner, _ := r.cur.Value(row, "owner_id").(string)
	if r.memories == nil {
		r.memories = map[[2]string]int64{}
	}
	k := [2]string{org, owner}
	if err := store.CheckMemoryCount(r.memories[k], store.MaxMemoriesPerOwner); err != nil {
		return fmt.Errorf("table memories: %w", err)
	}
	r.memories[k]++
	return nil
}
