package archive

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// noTables is a TableReader with no tables.
type noTables struct{}

func (noTables) NextTable() (store.ArchiveTable, error) { return store.ArchiveTable{}, io.EOF }
func (noTables) NextRow() ([]any, error)                { return nil, io.EOF }

func TestSameKeyCheckRefusesAnotherKey(t *testing.T) {
	same := sameKeyCheck{TableReader: noTables{}, got: func() string { return "k1:abc" }, want: "k1:abc"}
	if _, err := same.NextTable(); !errors.Is(err, io.EOF) {
		t.Errorf("the checked key check: %v, want io.EOF", err)
	}
	other := sameKeyCheck{TableReader: noTables{}, got: func() string { return "k2:def" }, want: "k1:abc"}
	if _, err := other.NextTable(); err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "key check") {
		t.Errorf("another key check: %v, want the archive refused", err)
	}
}
