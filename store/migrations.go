package store

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrSchemaTooNew reports a database migrated by a newer build of Quiver
// than this one: this build does not know the schema and must not write
// to it. Every backend's Open refuses such a database with an error
// wrapping it; upgrade Quiver (every replica) instead.
var ErrSchemaTooNew = errors.New("the database schema is newer than this build of quiver knows")

// Migration is one schema step as a backend's status reports it.
type Migration struct {
	Version int `json:"version"`
	// Name is the migration's file name, such as "0001_init.sql".
	Name string `json:"name"`
	// AppliedAt is when the database recorded the step, in UTC; zero for
	// a pending step.
	AppliedAt time.Time `json:"applied_at,omitzero"`
}

// MigrationStatus is where a database's schema stands against this build.
type MigrationStatus struct {
	// Known is the newest version this build knows.
	Known int `json:"known"`
	// Current is the newest version applied; 0 for a database never
	// migrated. Above Known, the database is too new for this build.
	Current int `json:"current"`
	// Applied are the steps the database recorded, by version.
	Applied []Migration `json:"applied"`
	// Pending are the steps this build knows that the database lacks, by
	// version.
	Pending []Migration `json:"pending"`
}

// TooNew reports whether the database holds a step this build does not
// know, which Open refuses with ErrSchemaTooNew.
func (st MigrationStatus) TooNew() bool { return st.Current > st.Known }

// WriteText writes the status for people: how many of the known steps
// are applied, each pending step, and a warning when the database is
// newer than this build.
func (st MigrationStatus) WriteText(w io.Writer) {
	switch {
	case st.TooNew():
		fmt.Fprintf(w, "schema: at migration %d, newer than this build (it knows up to %d): upgrade quiver before using this database\n", st.Current, st.Known)
	case len(st.Pending) == 0:
		fmt.Fprintf(w, "schema: up to date (migration %d)\n", st.Current)
	default:
		fmt.Fprintf(w, "schema: at migration %d of %d; pending:\n", st.Current, st.Known)
		for _, m := range st.Pending {
			fmt.Fprintf(w, "  %s\n", m.Name)
		}
	}
}
