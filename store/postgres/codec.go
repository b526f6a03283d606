package postgres

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// wrapErr prefixes err with the operation and maps the PostgreSQL
// conditions every repository shares onto store's errors: no row is
// store.ErrNotFound, a unique violation store.ErrExists. A repository
// with its own sentinel for a constraint (store.ErrNameTaken, …) tests
// for it before calling wrapErr. The driver's error stays in the chain,
// so context.Canceled and the PostgreSQL error remain testable.
func wrapErr(op string, err error) error {
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("postgres: %s: %w", op, store.ErrNotFound)
	case sqlState(err) == codeUniqueViolation:
		return fmt.Errorf("postgres: %s: %w (%w)", op, store.ErrExists, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// isUniqueViolation reports whether err is a unique violation, of the
// named constraint when constraint is not empty.
func isUniqueViolation(err error, constraint string) bool {
	return sqlState(err) == codeUniqueViolation && (constraint == "" || constraintOf(err) == constraint)
}

// isForeignKeyViolation reports whether err is a foreign key violation,
// of the named constraint when constraint is not empty: the row a write
// refers to (an organisation, a user) does not exist.
func isForeignKeyViolation(err error, constraint string) bool {
	return sqlState(err) == codeForeignKeyViolation && (constraint == "" || constraintOf(err) == constraint)
}

// utc returns a time read from a timestamptz column in UTC: pgx returns
// it in the process's local zone.
func utc(t time.Time) time.Time { return t.UTC() }

// optionalTime is the value of a timestamptz column where NULL means "not
// yet": the zero time is NULL.
func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// fromOptionalTime reverses optionalTime: NULL is the zero time, and
// anything else is returned in UTC.
func fromOptionalTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// textArray is the value of a NOT NULL text[] column holding names in
// order: nil is the empty array (pgx would send NULL).
func textArray(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}

// fromTextArray reverses textArray for a column where none is nil.
func fromTextArray(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return names
}

// exclusionJSON is one stored exclusion; the tags are the column's format,
// independent of store.Exclusion's Go field names (and the same as
// store/sqlite's, so an export moves them unchanged).
type exclusionJSON struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// encodeExclusions returns ex, bounded by store.BoundExclusions, as the
// JSON array of {name, reason} it is stored as, order kept; nil (not
// recorded) is NULL and an empty slice "[]". The column is json, not
// jsonb: jsonb refuses the escape \u0000 that a reason quoting a server's
// error may hold, and nothing queries inside it.
func encodeExclusions(ex []store.Exclusion) ([]byte, error) {
	ex = store.BoundExclusions(ex)
	if ex == nil {
		return nil, nil
	}
	out := make([]exclusionJSON, len(ex))
	for i, e := range ex {
		out[i] = exclusionJSON(e)
	}
	return json.Marshal(out)
}

// decodeExclusions reverses encodeExclusions: NULL (nil) is nil, "[]" an
// empty non-nil slice.
func decodeExclusions(b []byte) ([]store.Exclusion, error) {
	if b == nil {
		return nil, nil
	}
	var in []exclusionJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("stored exclusions: %w", err)
	}
	out := make([]store.Exclusion, len(in))
	for i, e := range in {
		out[i] = store.Exclusion(e)
	}
	return out, nil
}
