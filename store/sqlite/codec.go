package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// timeLayout stores instants as fixed-width UTC text with nanoseconds:
// lossless for Go times, readable in the sqlite3 shell, and sorting as
// text sorts the instants.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// encodeTime returns t in UTC as timeLayout text.
func encodeTime(t time.Time) string {
	return t.UTC().Format(timeLayout)
}

// decodeTime parses timeLayout text into a UTC time.
func decodeTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// encodeOptionalTime is encodeTime for a column where NULL means "not
// yet": the zero time is stored as NULL.
func encodeOptionalTime(t time.Time) sql.NullString {
	if t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: encodeTime(t), Valid: true}
}

// decodeOptionalTime reverses encodeOptionalTime: NULL is the zero time.
func decodeOptionalTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	return decodeTime(s.String)
}

// encodeTools returns the toolset as a JSON array, order kept; nil is "[]".
func encodeTools(tools []string) (string, error) {
	if tools == nil {
		tools = []string{}
	}
	b, err := json.Marshal(tools)
	return string(b), err
}

// decodeTools parses a JSON array of names; an empty array is nil.
func decodeTools(s string) ([]string, error) {
	var tools []string
	if err := json.Unmarshal([]byte(s), &tools); err != nil {
		return nil, fmt.Errorf("stored tools: %w", err)
	}
	if len(tools) == 0 {
		return nil, nil
	}
	return tools, nil
}

// encodeOptionalTools is encodeTools for a column where NULL means "never
// discovered": nil is NULL, an empty slice "[]".
func encodeOptionalTools(tools []string) (sql.NullString, error) {
	if tools == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// decodeOptionalTools reverses encodeOptionalTools: NULL is nil, "[]" an
// empty non-nil slice.
func decodeOptionalTools(s sql.NullString) ([]string, error) {
	if !s.Valid {
		return nil, nil
	}
	tools := []string{}
	if err := json.Unmarshal([]byte(s.String), &tools); err != nil {
		return nil, fmt.Errorf("stored tools: %w", err)
	}
	if tools == nil { // a stored JSON null; never written, read as none
		tools = []string{}
	}
	return tools, nil
}

// exclusionJSON is one stored exclusion; the tags are the column's format,
// independent of store.Exclusion's Go field names.
type exclusionJSON struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// encodeExclusions returns ex, bounded by store.BoundExclusions, as a JSON
// array of {name, reason}, order kept; nil (not recorded) is NULL and an
// empty slice "[]".
func encodeExclusions(ex []store.Exclusion) (sql.NullString, error) {
	ex = store.BoundExclusions(ex)
	if ex == nil {
		return sql.NullString{}, nil
	}
	out := make([]exclusionJSON, len(ex))
	for i, e := range ex {
		out[i] = exclusionJSON(e)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// decodeExclusions reverses encodeExclusions: NULL is nil, "[]" an empty
// non-nil slice.
func decodeExclusions(s sql.NullString) ([]store.Exclusion, error) {
	if !s.Valid {
		return nil, nil
	}
	var in []exclusionJSON
	if err := json.Unmarshal([]byte(s.String), &in); err != nil {
		return nil, fmt.Errorf("stored exclusions: %w", err)
	}
	out := make([]store.Exclusion, len(in))
	for i, e := range in {
		out[i] = store.Exclusion(e)
	}
	return out, nil
}
